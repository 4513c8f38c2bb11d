"""Voice notes in a turn: heard (limits, the Transcriber, the transcript as the message's text from then on) and the
reply spoken (the Speaker, as the scope's /voice mode says).

A voice note is handled like a typed message whose text is its transcript: crisis detection on the transcript, a
transcribed "ja" answers the open question, but a transcript never runs a command (only typed text is one). The
audio is not kept: once heard, only the transcript is logged, with the origin 'voice' (unless MNEMO_VOICE_KEEP: then
the step after the log keeps it beside the message in the database, bot/voice/recordings.py). A crisis answer is never
spoken (it goes as text, so the help lines can be read and tapped); the program's own short answers are not
spoken either, only the model's replies.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from bot.conversation.config import EngineConfig
from bot.conversation.crisis import assess
from bot.conversation.turn import CRISIS_SCAN_CHARS, Turn, check_input
from bot.exchange import Attachment, Reply, Voice
from bot.texts import t
from bot.voice.audio import audio_format, ogg_seconds
from bot.voice.errors import VoiceError, VoiceRefused, VoiceUnavailable
from bot.voice.port import Speaker, Transcriber
from bot.voice.spoken import MODES, VoiceMode, speakable, speaks
from memory import MemoryStore, MemoryStoreError, Scope, is_group_scope

log = logging.getLogger(__name__)

VOICE_STATE = "voice"  # the scope's /voice mode in scope_state: 'on', 'off' or 'auto' (none stored: off)
HEARD = ("The person sent this as a voice message; you read what speech recognition heard, which may have "
         "misheard a word.")


def megabytes(size: float, lang: str) -> str:
    """A size in MB as a person reads it ('20', '0,5')."""
    text = f"{round(size / 1_000_000, 1):g}"
    return text.replace(".", ",") if lang == "de" else text


def voice_problem(attachment: Attachment, config: EngineConfig,
                  lang: str | None = None) -> tuple[str, dict[str, str]] | None:
    """Why a voice note is refused before it is heard (the text's key and its values, sizes written for `lang`: the
    deployment's unless given), or None when it may be."""
    size = max(attachment.size, len(attachment.data))
    if size > config.voice_max_bytes:
        lang = lang or config.language
        return "voice_too_big", {"size": megabytes(size, lang), "limit": megabytes(config.voice_max_bytes, lang)}
    if attachment.seconds is not None and attachment.seconds > config.voice_max_seconds:
        return "voice_too_long", {"seconds": f"{attachment.seconds:.0f}", "limit": f"{config.voice_max_seconds:.0f}"}
    if audio_format(attachment.data) is None:
        return "voice_unsupported", {}
    return None


def with_transcript(text: str, transcript: str, group: bool) -> str:
    """The message as the engine reads it: the caption (if any) and the transcript; in a group after 'Name: '."""
    if group:
        name, _, caption = text.partition(": ")
        return f"{name}: " + " ".join(p for p in (caption.strip(), transcript) if p)
    return "\n".join(p for p in (text.strip(), transcript) if p)


def heard_failure(exc: VoiceError) -> str:
    """The text key for a voice note the service did not hear: it refuses mnemo, it is down, or the file is bad."""
    if isinstance(exc, VoiceRefused):
        return "voice_refused"
    return "voice_backend_down" if isinstance(exc, VoiceUnavailable) else "voice_unreadable"


async def _no_help(turn: Turn) -> None:
    """Without an engine (its own tests): no help text to send."""


class VoiceNotes:
    """Hears a turn's voice note and speaks its reply; either part is off while its backend is not set up."""

    def __init__(self, store: MemoryStore, config: EngineConfig, transcriber: Transcriber | None,
                 speaker: Speaker | None, clock: Callable[[], float] = time.time,
                 help_first: Callable[[Turn], Awaitable[None]] | None = None) -> None:
        self.store, self.config, self.clock = store, config, clock
        self.transcriber, self.speaker = transcriber, speaker
        self.help_first = help_first or _no_help  # the engine's: the help text at once, in a crisis

    async def mode(self, scope: Scope) -> VoiceMode:
        """The scope's /voice mode (off until set)."""
        stored = await self.store.state.get(scope, VOICE_STATE)
        return MODES.get(str(stored), "off")

    async def set_mode(self, scope: Scope, mode: VoiceMode) -> None:
        """Keep the scope's /voice mode."""
        await self.store.state.put(scope, VOICE_STATE, mode)

    async def hear(self, turn: Turn) -> Reply | None:
        """A voice note becomes its transcript, or is refused with one short sentence (nothing stored).

        A message logged before a crash is not heard again: its logged transcript is the text.
        """
        attachment = turn.incoming.attachment
        if attachment is None or attachment.kind != "voice":
            return None
        if not turn.incoming.forwarded:  # a forwarded voice note stays someone else's words (intake.py)
            turn.origin = "voice"
        if turn.logged_id is not None:
            logged = await self.store.messages.get(turn.scope, turn.logged_id)
            await self._heard(turn, logged.text if logged is not None else turn.incoming.text)
            return None
        if self.transcriber is None:
            log.warning("a voice note came, but no speech recognition is set up: set MNEMO_TRANSCRIBE_BASE_URL, "
                        "MNEMO_TRANSCRIBE_MODEL and MNEMO_TRANSCRIBE_API_KEY")
            return await self._refused(turn, "voice_not_set_up")
        problem = voice_problem(attachment, self.config, turn.lang)
        if problem is not None:
            log.info("voice note %s refused: %s", turn.incoming.channel_message_id, problem[0])
            return await self._refused(turn, problem[0], **problem[1])
        try:
            transcript = await self.transcriber.transcribe(attachment.data, f"voice.{audio_format(attachment.data)}")
        except VoiceError as exc:
            log.warning("voice note %s not heard: %s", turn.incoming.channel_message_id, exc)
            return await self._refused(turn, heard_failure(exc))
        transcript = " ".join(transcript.split())
        if not transcript:
            return await self._refused(turn, "voice_empty")
        text = with_transcript(turn.incoming.text, transcript, is_group_scope(turn.incoming.user_id))
        unfit = check_input(text, self.config.max_message_chars)  # the caption may be what is wrong
        if unfit is not None:
            turn.crisis = turn.crisis or await self.config.crisis_detector.crisis(text[:CRISIS_SCAN_CHARS])
            if unfit != "too_long":
                return await self._refused(turn, unfit)
            return await self._refused(turn, "voice_too_many_words", size=str(len(text)),
                                 limit=str(self.config.max_message_chars))
        await self._heard(turn, text)
        return None

    async def keep(self, turn: Turn) -> None:
        """Keep a heard voice note's audio beside its logged message in the database (MNEMO_VOICE_KEEP; a note heard
        again after a crash is kept again). A database that refuses it is logged; the message is answered all the
        same."""
        audio, turn.recording = turn.recording, b""
        if not audio:
            return
        try:
            # Written only while the message exists, in one transaction: a /deleteme that took it first leaves no
            # recording behind, one that comes later takes the recording with it.
            kept = await self.store.voice_recordings.keep(turn.scope, turn.message_id, audio,
                                                          audio_format(audio) or "audio", self.clock())
        except MemoryStoreError:
            log.exception("the audio of voice note %s (message %s) could not be kept",
                          turn.incoming.channel_message_id, turn.message_id)
            return
        if kept:
            log.info("voice note %s kept with message %s", turn.incoming.channel_message_id, turn.message_id)

    async def _heard(self, turn: Turn, text: str) -> None:
        """From here on the turn's text is the transcript (the audio is let go, or held for `keep` when it is kept);
        a crisis in it is seen."""
        attachment = turn.incoming.attachment
        assert attachment is not None  # only a voice note is heard
        if self.config.voice_keep:
            turn.recording = attachment.data
        turn.incoming = replace(turn.incoming, text=text, attachment=replace(attachment, data=b""))
        if not turn.crisis:  # the transcript's verdict, and whether it was a close call (a judge may be asked)
            found = await assess(self.config.crisis_detector, text[:CRISIS_SCAN_CHARS])
            turn.crisis, turn.uncertain = found.crisis, turn.uncertain or found.uncertain
        turn.hints.append(HEARD)

    async def _refused(self, turn: Turn, key: str, **values: str) -> Reply:
        """One short sentence, after the help text when the caption or transcript shows signs of crisis."""
        if turn.crisis:
            await self.help_first(turn)
        return Reply((t(turn.lang, key, **values),), failed=True)

    async def speak(self, turn: Turn) -> None:
        """Speak the reply when the scope's mode asks for it; a failing Speaker leaves the reply as text only."""
        reply = turn.reply
        if self.speaker is None or reply is None:
            return
        if not speaks(await self.mode(turn.scope), turn.origin == "voice"):
            return
        text = speakable("\n\n".join(reply.bubbles), self.config.speech_max_chars)
        if not text:
            log.info("the reply to message %s has no sentence short enough to speak; text only", turn.message_id)
            return
        try:
            audio = await self.speaker.speak(text)
        except VoiceError as exc:
            log.warning("the reply to message %s goes as text only: %s", turn.message_id, exc)
            return
        turn.reply = replace(reply, voice=Voice(audio, seconds=ogg_seconds(audio)))
