"""Errors of the voice backends, mapped at the boundary (the SDK's errors never leave openai_audio.py).

    BotError (bot/errors.py)
    └── VoiceError           a voice backend could not give a usable answer
        ├── VoiceUnavailable the backend did not answer: connection, timeout, 5xx, 429
        └── VoiceRejected    the backend refused the request or the audio (4xx: a broken file, a bad key, an
                             unknown model), or answered with something that is not what was asked for
"""
from __future__ import annotations

from bot.errors import BotError


class VoiceError(BotError):
    """A voice backend (transcription or speech) could not give a usable answer."""


class VoiceUnavailable(VoiceError):
    """The backend did not answer: connection refused, timeout, a server error, rate limited."""


class VoiceRejected(VoiceError):
    """The backend refused the request or the audio, or its answer is not what was asked for."""
