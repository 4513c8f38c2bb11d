"""A local fake of the OpenAI audio API on 127.0.0.1, for the real openai SDK: /v1/audio/transcriptions (multipart;
it keeps the exact bytes of every file it received) and /v1/audio/speech (it really speaks, with espeak-ng and
opusenc, so the voice note it sends back is a real OGG/Opus file).

Like the real service, it refuses a file whose bytes are no audio it knows and an OGG stream that is broken (400),
before any scripted answer is used.
"""
from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.voice.audio import audio_format
from tests.fakes.audio import ogg_problem, spoken
from tests.fakes.web import LocalServer


@dataclass
class Answer:
    """One scripted answer: a transcript (or speech bytes), or an HTTP error, maybe late."""

    text: str = ""
    status: int = 200
    delay: float = 0.0
    audio: bytes | None = None  # speech: these bytes instead of the spoken input
    content_type: str = "audio/ogg"


@dataclass(frozen=True)
class Upload:
    """A file the transcription endpoint received, with the form's other fields and the key it was sent with."""

    filename: str
    content_type: str
    data: bytes
    fields: dict[str, str]
    authorization: str


class FakeAudioAPI(LocalServer):
    """`async with FakeAudioAPI() as audio`: point the SDK at `audio.base_url`; script with `hear` and `say`."""

    def __init__(self) -> None:
        super().__init__()
        self.uploads: list[Upload] = []
        self.speech_requests: list[dict[str, Any]] = []
        self.speech_sent: list[bytes] = []  # the audio of every speech answered with 200
        self._heard: deque[Answer] = deque()
        self._said: deque[Answer] = deque()

    @property
    def base_url(self) -> str:
        """The base URL the SDK takes (MNEMO_TRANSCRIBE_BASE_URL, MNEMO_SPEECH_BASE_URL)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def hear(self, text: str = "", status: int = 200, delay: float = 0.0) -> None:
        """Queue the next transcription's answer (a transcript, or an error status, maybe late)."""
        self._heard.append(Answer(text, status, delay))

    def say(self, status: int = 200, delay: float = 0.0, audio: bytes | None = None,
            content_type: str = "audio/ogg") -> None:
        """Queue the next speech answer (by default the input spoken; else an error, or these bytes)."""
        self._said.append(Answer("", status, delay, audio, content_type))

    @staticmethod
    def _error(status: int, message: str) -> web.Response:
        kind = "invalid_request_error" if status < 500 else "server_error"
        return web.json_response({"error": {"message": message, "type": kind, "code": None}}, status=status)

    async def _transcriptions(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return self._error(400, "No file was sent.")
        data = upload.file.read()
        fields = {k: str(v) for k, v in form.items() if k != "file"}
        self.uploads.append(Upload(upload.filename, upload.content_type, data, fields,
                                   request.headers.get("Authorization", "")))
        kind = audio_format(data)
        broken = ogg_problem(data) if kind == "ogg" else None
        if kind is None or broken is not None:
            return self._error(400, f"Invalid file format or corrupted file ({broken or 'unknown format'}). "
                                    "Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm")
        answer = self._heard.popleft() if self._heard else Answer("")
        await asyncio.sleep(answer.delay)
        if answer.status != 200:
            return self._error(answer.status, "The server had an error while processing your request.")
        if fields.get("response_format") == "text":
            return web.Response(text=answer.text, content_type="text/plain")
        return web.json_response({"text": answer.text})

    async def _speech(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.speech_requests.append(body)
        answer = self._said.popleft() if self._said else Answer()
        await asyncio.sleep(answer.delay)
        if answer.status != 200:
            return self._error(answer.status, "The server had an error while processing your request.")
        if body.get("response_format") != "opus" and answer.audio is None:
            return self._error(400, "this fake speaks only response_format=opus")
        audio = answer.audio if answer.audio is not None else await asyncio.to_thread(spoken, str(body["input"]))
        self.speech_sent.append(audio)
        return web.Response(body=audio, content_type=answer.content_type)

    def _app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        app.router.add_post("/v1/audio/speech", self._speech)
        return app


def as_json(upload: Upload) -> str:
    """An upload's fields for an assertion message."""
    return json.dumps({"filename": upload.filename, "content_type": upload.content_type, "bytes": len(upload.data),
                       **upload.fields})
