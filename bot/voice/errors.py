"""Errors of the voice backends, mapped at the boundary (the SDK's errors never leave openai_audio.py).

    BotError (bot/errors.py)
    └── VoiceError           a voice backend could not give a usable answer
        ├── VoiceUnavailable the backend did not answer: connection, timeout, 5xx, 429
        ├── VoiceRejected    the backend refused the audio (4xx: a broken file), or answered with something that
        │                    is not what was asked for
        └── VoiceRefused     the backend refused the service itself: 401/403 (the key) or 404 (the model's name or
                             the URL); `fix` says which, and the message names the setting to change
"""
from __future__ import annotations

from typing import Literal

from bot.errors import BotError


class VoiceError(BotError):
    """A voice backend (transcription or speech) could not give a usable answer."""


class VoiceUnavailable(VoiceError):
    """The backend did not answer: connection refused, timeout, a server error, rate limited."""


class VoiceRejected(VoiceError):
    """The backend refused the request or the audio, or its answer is not what was asked for."""


class VoiceRefused(VoiceError):
    """The backend refuses to serve at all: `fix` is "key" (401/403) or "model" (404: the model or the URL); the
    person cannot help it, only the operator."""

    def __init__(self, message: str, fix: Literal["key", "model"]) -> None:
        super().__init__(message)
        self.fix = fix
