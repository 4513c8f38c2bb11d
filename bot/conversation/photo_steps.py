"""Photos in a turn: the picture checked before the message is logged, one honest sentence when a photo without words
meets a model that cannot see, and the model's answer with the picture (its description kept with the message)."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.conversation.config import EngineConfig
from bot.conversation.intake import own_words
from bot.conversation.pictures import (
    SEEN,
    UNSEEN,
    ask_description,
    clean_description,
    photo_text,
    prepare,
    refusal,
    refused,
)
from bot.conversation.prompt import LANGUAGE_NAMES
from bot.conversation.turn import Turn
from bot.errors import LLMRejected, PictureError
from bot.exchange import Reply
from bot.llm.port import LLM, Image, OnText
from bot.texts import t
from memory import MemoryStore

log = logging.getLogger(__name__)

Write = Callable[[Turn, tuple[str, ...], "OnText | None", tuple[Image, ...]], Awaitable[str]]


class PhotoSteps:
    """The steps of a turn that bring a picture; `write` is the engine's model answer for a turn."""

    def __init__(self, store: MemoryStore, chat: LLM, config: EngineConfig, write: Write) -> None:
        self.store, self.chat, self.config, self._write = store, chat, config, write

    async def check(self, turn: Turn) -> Reply | None:
        """Check a picture (its size and kind; decoded only for a model that sees it) and make the model's copy."""
        attachment, config = turn.incoming.attachment, self.config
        if attachment is None or attachment.kind != "image":
            return None
        try:
            reason = refusal(attachment, config.image_max_bytes)
            if reason is not None:
                raise PictureError(reason, f"{attachment.mime}, {attachment.size} bytes")
            turn.picture = await asyncio.to_thread(prepare, attachment.data, config.image_max_pixels, config.vision)
        except PictureError as exc:
            log.info("picture in message %s refused: %s", turn.incoming.channel_message_id, exc)
            if turn.crisis:
                return None  # the words are answered, without the picture
            size = max(attachment.size, len(attachment.data))
            return Reply((refused(exc, size, config.image_max_bytes, config.image_max_pixels, turn.lang),),
                         failed=True)
        return None

    async def unseen(self, turn: Turn) -> Reply | None:
        """A photo without a caption that the model cannot see: one honest sentence, without the model."""
        if turn.photo and turn.picture is None and not own_words(turn.incoming.text, turn.group).strip():
            log.info("a photo came, but the chat model sees no pictures (MNEMO_VISION, or a vision model)")
            return Reply((t(turn.lang, "photo_unseen"),))
        return None

    async def answer(self, turn: Turn, extra: tuple[str, ...]) -> str:
        """The model's answer to a photo turn (a plain message is answered by the engine itself): the picture goes
        with it when the model sees pictures (its description is then kept with the message), else the program says
        under the answer that the picture was not seen."""
        lang = turn.lang
        if turn.picture is not None:
            seen = SEEN.format(language=LANGUAGE_NAMES.get(lang, "German"))
            try:
                text = await self._write(turn, (*extra, seen), turn.on_progress, (turn.picture,))
            except LLMRejected as exc:  # a model that takes no pictures after all: the words alone are answered
                log.warning("the chat model refused the picture of message %s: %s", turn.message_id, exc)
            else:
                await self._keep_description(turn, turn.picture)
                return text
            if not own_words(turn.incoming.text, turn.group).strip():
                return t(lang, "photo_unseen")
        text = await self._write(turn, (*extra, UNSEEN), turn.on_progress, ())
        return f"{text}\n\n{t(lang, 'photo_not_seen')}"

    async def _keep_description(self, turn: Turn, picture: Image) -> None:
        """Keep what the picture shows with its message ('(Foto: …) caption'), found later by search and time words.

        The description comes from the answer's [PHOTO: …]; a model that gave none (or garbage) is asked once more.
        """
        lang = turn.lang
        description = clean_description(turn.described) or await ask_description(
            self.chat, picture, LANGUAGE_NAMES.get(lang, "German"))
        if description:
            text = photo_text(t(lang, "photo_label"), description, turn.incoming.text, turn.group)
            await self.store.messages.rewrite(turn.scope, turn.message_id, text)
