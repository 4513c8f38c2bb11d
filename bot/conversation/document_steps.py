"""Documents in a turn: read before the message is logged, within a time limit (or one short sentence saying why not),
their whole text checked for signs of crisis in overlapping pieces, their text given to the model for this turn only,
the message logged as '(Dokument: name) caption', a word when only the beginning was read. A crisis in a document: the
help text at once, then the careful answer with only the part that showed it. What the person asks to keep from one is
learned from their request and the answer naming it, as any fact."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.conversation.config import EngineConfig
from bot.conversation.crisis import assess
from bot.conversation.documents import (
    DocumentLimits,
    ReadDocument,
    crisis_chunks,
    crisis_context,
    document_context,
    read_in_time,
)
from bot.conversation.pictures import photo_text
from bot.conversation.safety import signals_crisis
from bot.conversation.turn import Turn
from bot.conversation.voice_notes import megabytes
from bot.errors import DocumentError
from bot.exchange import Attachment, Reply
from bot.texts import t

log = logging.getLogger(__name__)


def logged_text(turn: Turn, lang: str) -> str:
    """The person's message as it is logged: a photo's as '(Foto) caption', a document's as '(Dokument: name) caption'
    (its text is not kept), any other as it came."""
    incoming = turn.incoming
    if turn.photo:  # the model's description goes in once it answered
        return photo_text(t(lang, "photo_label"), "", incoming.text, turn.group)
    if turn.document_sent and incoming.attachment is not None:
        return photo_text(t(lang, "document_label"), incoming.attachment.name or "?", incoming.text, turn.group)
    return incoming.text


def count(number: int, lang: str) -> str:
    """A number as a person reads it ('20.000' in German, '20,000' in English)."""
    return f"{number:,}".replace(",", ".") if lang == "de" else f"{number:,}"


async def _no_help(turn: Turn) -> None:
    """Without an engine (its own tests): no help text to send."""


async def _not_counted(name: str) -> None:
    """Without a store (its own tests): nothing counted."""


class DocumentSteps:
    """The step of a turn that reads a document."""

    def __init__(self, config: EngineConfig, help_first: Callable[[Turn], Awaitable[None]] | None = None,
                 count_failure: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.config = config
        self.limits = DocumentLimits(config.document_max_bytes, config.document_max_pages, config.document_max_chars,
                                     config.document_max_seconds)
        self.help_first = help_first or _no_help  # the engine's: the help text at once, in a crisis
        self.count_failure = count_failure or _not_counted  # the store's failure counts (`mnemo doctor`)

    async def read(self, turn: Turn) -> Reply | None:
        """Read a document (a PDF in a process of its own, at most `max_seconds`), check its whole text for signs
        of crisis, and give its text to the model with this turn's words.

        One that is not read is answered with why. A crisis in its text: the help text goes out now, and the model
        gets only the part that showed it. A crisis in the caption: it is not read at all (the help text went out
        already); the words are answered without it."""
        attachment = turn.incoming.attachment
        if attachment is None or attachment.kind != "document" or turn.crisis:
            return None
        deadline = asyncio.get_running_loop().time() + self.limits.max_seconds
        try:
            document = await self._read(attachment)
        except DocumentError as exc:
            log.info("document in message %s not read: %s", turn.incoming.channel_message_id, exc)
            return Reply((self.refusal(exc, attachment),), failed=True)
        log.info("document in message %s read: %s pages, %d of %d characters", turn.incoming.channel_message_id,
                 document.pages or "-", len(document.text), document.chars)
        turn.document_text = document.whole or document.text  # a part of what the message brings (intake.py)
        part = await self.crisis_in(turn.document_text, deadline)
        if part is not None:
            log.info("document in message %s shows signs of crisis", turn.incoming.channel_message_id)
            turn.crisis = True
            await self.help_first(turn)
            turn.hints.append(crisis_context(document.name, part))
            return None
        turn.hints.append(document_context(document))
        if document.cut:
            lang = self.config.language
            turn.preface.append(t(lang, "document_cut", chars=count(len(document.text), lang),
                                  total=count(document.chars, lang)))
        return None

    async def _read(self, attachment: Attachment) -> ReadDocument:
        """The document's text; DocumentError when it is not read, or not within `max_seconds` (a PDF is read in a
        process of its own, killed at the limit: pypdf cannot be stopped in a thread)."""
        return await read_in_time(attachment.data, attachment.mime, attachment.name, attachment.size, self.limits)

    async def crisis_in(self, text: str, deadline: float | None = None) -> str | None:
        """The first piece of the whole text in which signs of crisis are seen, or None.

        The text is cut into overlapping pieces the classifier reads whole (`crisis_chunks`). The explicit patterns read
        every piece first (milliseconds each); then the whole detector reads them in order until the document's time
        is up (the event loop's `deadline`): a classifier that cannot finish in time leaves the rest to the patterns
        that read it, and the cut is logged and counted (`documents.crisis_scan_cut`).
        """
        pieces = crisis_chunks(text)
        for part in pieces:
            if signals_crisis(part):
                return part
        loop = asyncio.get_running_loop()
        for at, part in enumerate(pieces):
            left = None if deadline is None else deadline - loop.time()
            try:
                if left is not None and left <= 0:
                    raise TimeoutError
                if (await asyncio.wait_for(assess(self.config.crisis_detector, part), left)).crisis:
                    return part
            except TimeoutError:
                log.warning("the crisis detector read %d of %d pieces of a document in time; the patterns read all",
                            at, len(pieces))
                await self.count_failure("documents.crisis_scan_cut")
                return None
        return None

    def refusal(self, error: DocumentError, attachment: Attachment) -> str:
        """The short sentence for a document that is not read, with the limit it broke."""
        lang, limits = self.config.language, self.limits
        size = max(attachment.size, len(attachment.data))
        pages = error.reason == "document_too_many_pages"
        limit = str(limits.max_pages) if pages else megabytes(limits.max_bytes, lang)
        return t(lang, error.reason, size=megabytes(size, lang), limit=limit, pages=error.values.get("pages", "?"),
                 seconds=error.values.get("seconds", "?"))
