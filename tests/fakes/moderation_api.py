"""A local fake of the moderation services mnemo may ask: OpenAI's POST /v1/moderations and Llama Guard behind an
OpenAI-compatible POST /v1/chat/completions. A test scripts what it flags, how slow it is, or that it fails."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.conversation.moderation import OPENAI_CATEGORIES
from tests.fakes.web import LocalServer


class FakeModeration(LocalServer):
    """Flags a text when `flags(text)` says so; `delay` seconds before each answer; `status` other than 200 fails."""

    def __init__(self, flags: Callable[[str], bool] = lambda text: False) -> None:
        super().__init__()
        self.flags = flags
        self.delay = 0.0
        self.status = 200
        self.body: Any = None  # a body to answer instead of the real shape (to fake an unreadable answer)
        self.requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []  # path, headers, json

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/moderations", self._moderations)
        app.router.add_post("/v1/chat/completions", self._chat)
        return app

    async def _answer(self, request: web.Request, shape: Callable[[bool], Any]) -> web.Response:
        body = await request.json()
        self.requests.append((request.path, {k.lower(): v for k, v in request.headers.items()}, body))
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.status != 200:
            return web.json_response({"error": {"message": "fake failure", "type": "api_error"}}, status=self.status)
        if self.body is not None:
            return web.json_response(self.body)
        text = body["input"] if "input" in body else body["messages"][-1]["content"]
        return web.json_response(shape(self.flags(str(text))))

    async def _moderations(self, request: web.Request) -> web.Response:
        def shape(flagged: bool) -> Any:
            categories = {name: False for name in (*OPENAI_CATEGORIES, "harassment", "hate", "sexual")}
            categories.update({"self-harm": flagged, "self-harm/intent": flagged})
            return {"id": "modr-1", "model": "omni-moderation-latest",
                    "results": [{"flagged": flagged, "categories": categories,
                                 "category_scores": {k: 0.9 if v else 0.01 for k, v in categories.items()}}]}

        return await self._answer(request, shape)

    async def _chat(self, request: web.Request) -> web.Response:
        def shape(flagged: bool) -> Any:
            said = "unsafe\nS11" if flagged else "safe"
            return {"id": "chatcmpl-1", "object": "chat.completion", "model": "llama-guard3",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": said}}]}

        return await self._answer(request, shape)
