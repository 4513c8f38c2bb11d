"""Documents in a turn: read before the message is logged (or one short sentence saying why not), their text given to
the model for this turn only, the message logged as '(Dokument: name) caption', a word when only the beginning was
read. What the person asks to keep from one is learned from their request and the answer naming it, as any fact."""
from __future__ import annotations

import asyncio
import logging

from bot.conversation.config import EngineConfig
from bot.conversation.documents import DocumentLimits, document_context, read_document
from bot.conversation.pictures import photo_text
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


class DocumentSteps:
    """The step of a turn that reads a document."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.limits = DocumentLimits(config.document_max_bytes, config.document_max_pages, config.document_max_chars)

    async def read(self, turn: Turn) -> Reply | None:
        """Read a document (in a thread: pypdf takes its time); its text goes to the model with this turn's words.

        One that is not read is answered with why. In a crisis it is not read at all: the words are answered, with the
        help lines, without it."""
        attachment = turn.incoming.attachment
        if attachment is None or attachment.kind != "document" or turn.crisis:
            return None
        try:
            document = await asyncio.to_thread(read_document, attachment.data, attachment.mime, attachment.name,
                                               attachment.size, self.limits)
        except DocumentError as exc:
            log.info("document in message %s not read: %s", turn.incoming.channel_message_id, exc)
            return Reply((self.refusal(exc, attachment),), failed=True)
        log.info("document in message %s read: %s pages, %d of %d characters", turn.incoming.channel_message_id,
                 document.pages or "-", len(document.text), document.chars)
        turn.hints.append(document_context(document))
        if document.cut:
            lang = self.config.language
            turn.preface.append(t(lang, "document_cut", chars=count(len(document.text), lang),
                                  total=count(document.chars, lang)))
        return None

    def refusal(self, error: DocumentError, attachment: Attachment) -> str:
        """The short sentence for a document that is not read, with the limit it broke."""
        lang, limits = self.config.language, self.limits
        size = max(attachment.size, len(attachment.data))
        pages = error.reason == "document_too_many_pages"
        limit = str(limits.max_pages) if pages else megabytes(limits.max_bytes, lang)
        return t(lang, error.reason, size=megabytes(size, lang), limit=limit, pages=error.values.get("pages", "?"))
