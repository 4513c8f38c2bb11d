"""/voice an|aus|auto: whether the companion's replies come as voice notes too (per chat; the text always comes)."""
from __future__ import annotations

import logging

from bot.commands.invocation import Call
from bot.exchange import Reply
from bot.voice.spoken import MODES

log = logging.getLogger(__name__)


def sets_mode(words: list[str]) -> bool:
    """/voice WORD sets the mode; /voice alone shows it."""
    return bool(words)


async def voice(call: Call, args: str) -> Reply:
    """/voice: the chat's voice mode; /voice an|aus|auto (on|off|auto): set it (not on without a Speaker)."""
    notes = call.engine.voice
    words = args.lower().split()
    if not words:
        now = await notes.mode(call.scope)
        lines = [call.t("voice_mode", mode=call.t(f"voice_mode_{now}"))]
        if notes.speaker is None:
            lines.append(call.t("voice_speaker_not_set_up"))
        return Reply(("\n\n".join(lines),))
    mode = MODES.get(words[0]) if len(words) == 1 else None
    if mode is None:
        return Reply((call.t("voice_usage"),))
    if mode != "off" and notes.speaker is None:
        log.info("/voice %s asked, but no voice is set up: set MNEMO_SPEECH_BASE_URL, MNEMO_SPEECH_MODEL, "
                 "MNEMO_SPEECH_VOICE and MNEMO_SPEECH_API_KEY", mode)
        return Reply((call.t("voice_speaker_not_set_up"),))
    await notes.set_mode(call.scope, mode)
    return Reply((call.t("voice_mode", mode=call.t(f"voice_mode_{mode}")),))
