"""The voice ports: a `Transcriber` turns a voice note into text, a `Speaker` turns a reply into a voice note."""
from __future__ import annotations

from typing import Protocol


class Transcriber(Protocol):
    """Speech to text (an OpenAI-compatible /v1/audio/transcriptions endpoint, …)."""

    async def transcribe(self, audio: bytes, filename: str) -> str:
        """The words spoken in the audio ('' when none); `filename`'s extension names the format.

        Raises VoiceUnavailable when the backend does not answer, VoiceRejected when it refuses the audio.
        """
        ...


class Speaker(Protocol):
    """Text to speech (an OpenAI-compatible /v1/audio/speech endpoint, …)."""

    async def speak(self, text: str) -> bytes:
        """The text spoken, as an OGG/Opus voice note.

        Raises VoiceUnavailable when the backend does not answer, VoiceRejected when it refuses the text or
        answers with something that is no OGG/Opus.
        """
        ...
