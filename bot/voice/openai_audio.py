"""The voice ports over any OpenAI-compatible audio API (OpenAI, Groq, a local faster-whisper, whisper.cpp or TTS
server): /v1/audio/transcriptions and /v1/audio/speech over `bot.llm.openai_wire`.

Neither call is tried again: a voice note that could not be heard is answered at once ("send it again"), and a
reply that could not be spoken goes as text only. The client's errors are mapped here, never passed on.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from bot.llm.openai_wire import APIConnectionError, APIError, APIStatusError, APITimeoutError, Client
from bot.llm.retries import error_detail, redact
from bot.voice.audio import audio_format
from bot.voice.errors import VoiceError, VoiceRefused, VoiceRejected, VoiceUnavailable

T = TypeVar("T")

NO_KEY = "no-key"  # local servers need no key; some proxies refuse a request without any Authorization header
MIME = {"mp3": "audio/mpeg", "wav": "audio/wav", "webm": "audio/webm"}  # else audio/<extension>
MAX_SPEECH_BYTES = 20 * 1024 * 1024  # a spoken reply of a few hundred characters is a few hundred KB
SETTINGS = {"transcription": "MNEMO_TRANSCRIBE", "speech": "MNEMO_SPEECH"}  # each service's settings begin so


class _AudioClient:
    """One client and how its errors read (the key never shows)."""

    def __init__(self, what: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> None:
        self.model, self.timeout, self._key = model, timeout, api_key
        self.client = Client(base_url, api_key or NO_KEY, timeout)
        self.where = f"{what} model {model!r} at {self.client.base_url}"
        self.settings = SETTINGS.get(what, "MNEMO_TRANSCRIBE")

    async def call(self, request: Callable[[], Awaitable[T]]) -> T:
        """Run one request; its failure as a VoiceError."""
        try:
            return await request()
        except APIError as exc:
            raise self._error(exc) from exc

    def _error(self, exc: APIError) -> VoiceError:
        if isinstance(exc, APITimeoutError):
            return VoiceUnavailable(f"{self.where} did not answer within {self.timeout:g} s")
        if isinstance(exc, APIStatusError):
            detail = redact(error_detail(exc.body, exc.message), self._key)
            status = exc.status_code
            if status in (401, 403, 404):
                return self._refused(status, detail)
            kind = VoiceUnavailable if status >= 500 or status in (408, 429) else VoiceRejected
            return kind(f"{self.where} answered {status}: {detail}")
        if isinstance(exc, APIConnectionError):
            return VoiceUnavailable(f"cannot reach {self.where}: {exc.__cause__ or exc}")
        return VoiceRejected(f"{self.where} gave an unreadable answer: {redact(str(exc), self._key)}")

    def _refused(self, status: int, detail: str) -> VoiceRefused:
        """A 401/403 (the key) or a 404 (the model or the URL), with the settings that mend it."""
        if status == 404:
            return VoiceRefused(f"{self.where} answered 404 (no such model or endpoint): {detail} – check "
                                f"{self.settings}_MODEL and {self.settings}_BASE_URL", "model")
        return VoiceRefused(f"{self.where} refused the API key with {status}: {detail} – check "
                            f"{self.settings}_API_KEY", "key")

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.client.close()


class OpenAITranscriber(_AudioClient):
    """The Transcriber over an OpenAI-compatible /v1/audio/transcriptions endpoint."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None, *, timeout: float = 60.0,
                 language: str | None = None) -> None:
        super().__init__("transcription", model, base_url, api_key, timeout)
        self.language = language  # ISO-639-1 ('de'); None: the backend finds out

    async def transcribe(self, audio: bytes, filename: str) -> str:
        """The words spoken in the audio, as the endpoint heard them ('' when it heard none)."""
        extension = filename.rsplit(".", 1)[-1]
        mime = MIME.get(extension, f"audio/{extension}")
        fields = {"model": self.model, **({"language": self.language} if self.language else {})}
        result = await self.call(lambda: self.client.upload("audio/transcriptions", (filename, audio, mime), fields))
        text = result if isinstance(result, str) else result.get("text") if isinstance(result, dict) else None
        if not isinstance(text, str):
            raise VoiceRejected(f"{self.where} answered without a text ({type(result).__name__})")
        return text.strip()


class OpenAISpeaker(_AudioClient):
    """The Speaker over an OpenAI-compatible /v1/audio/speech endpoint (response_format 'opus': OGG/Opus)."""

    def __init__(self, model: str, voice: str, base_url: str | None, api_key: str | None, *,
                 timeout: float = 60.0) -> None:
        super().__init__("speech", model, base_url, api_key, timeout)
        self.voice = voice

    async def speak(self, text: str) -> bytes:
        """The text spoken as an OGG/Opus voice note; anything else the endpoint sends back is refused."""
        audio = await self.call(lambda: self.client.post_raw(
            "audio/speech", {"model": self.model, "voice": self.voice, "input": text, "response_format": "opus"}))
        if len(audio) > MAX_SPEECH_BYTES:
            raise VoiceRejected(f"{self.where} answered with {len(audio)} bytes for {len(text)} characters")
        found = audio_format(audio)
        if found != "ogg":
            raise VoiceRejected(f"{self.where} answered with {found or 'unknown data'}, not OGG/Opus "
                                "(does it support response_format=opus?)")
        return audio
