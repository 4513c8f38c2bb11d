"""The optional crisis layer a moderation service gives: OpenAI's /v1/moderations or Llama Guard behind an
OpenAI-compatible chat endpoint (off unless MNEMO_MODERATION_URL is set).

It only ever adds a yes: when the service is slow (past the timeout), down or answers something unreadable, the
local layers' verdict stands; the failure is logged and counted (`mnemo doctor` shows `moderation.timeout`,
`moderation.error`), and the help line is never held back by it.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from bot import tls

log = logging.getLogger(__name__)

ModerationKind = Literal["openai", "llama-guard"]
# OpenAI's categories that mean the help line (the person harms themselves, or violence is done or threatened).
OPENAI_CATEGORIES = ("self-harm", "self-harm/intent", "self-harm/instructions", "violence")
# Llama Guard 3's hazard codes that mean the help line: S1 violent crimes, S11 suicide and self-harm.
LLAMA_GUARD_CODES = ("S1", "S11")

CountFailure = Callable[[str], Awaitable[None]]  # counts one failure by its name (the store's failure counts)


class ModerationUnreadable(Exception):
    """The service answered, but not in the shape its kind promises."""


@dataclass(frozen=True)
class ModerationConfig:
    """Where the service is and how to ask it."""

    url: str  # the API's base, e.g. https://api.openai.com/v1
    kind: ModerationKind = "openai"
    model: str = "omni-moderation-latest"
    api_key: str | None = None
    timeout: float = 2.0  # seconds; past them the local layers decide alone


def openai_flags(body: Any) -> bool:
    """Whether a /v1/moderations answer names a category that means the help line."""
    try:
        categories = body["results"][0]["categories"]
        return any(bool(categories.get(name)) for name in OPENAI_CATEGORIES)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ModerationUnreadable(f"no results[0].categories in the answer ({type(body).__name__})") from exc


def llama_guard_flags(body: Any) -> bool:
    """Whether a Llama Guard chat answer ('safe', or 'unsafe' and its codes) names a code that means the help line."""
    try:
        said = str(body["choices"][0]["message"]["content"]).strip().lower()
    except (KeyError, IndexError, TypeError) as exc:
        raise ModerationUnreadable(f"no choices[0].message.content in the answer ({type(body).__name__})") from exc
    if said.startswith("safe"):
        return False
    if not said.startswith("unsafe"):
        log.debug("Llama Guard said: %r", said[:200])
        raise ModerationUnreadable(f"Llama Guard said neither safe nor unsafe ({len(said)} characters)")
    codes = {code.strip().upper() for code in said.removeprefix("unsafe").replace(",", "\n").split()}
    return bool(codes & set(LLAMA_GUARD_CODES))


class ModerationDetector:
    """Asks the moderation service about a text; a CrisisDetector whose only failure mode is 'no'."""

    def __init__(self, config: ModerationConfig, count_failure: CountFailure,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.config, self._count = config, count_failure
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._client = httpx.AsyncClient(base_url=config.url.rstrip("/") + "/", headers=headers,
                                         timeout=config.timeout, transport=transport, verify=tls.context())

    async def crisis(self, text: str) -> bool:
        """True when the service flags the text; False when it does not, or could not be asked in time."""
        if not text.strip():
            return False
        try:
            return await self._ask(text)
        except httpx.TimeoutException as exc:
            log.warning("moderation service %s took longer than %.1f s; the local layers decide (%s)",
                        self.config.url, self.config.timeout, type(exc).__name__)
            await self._count("moderation.timeout")
        except (httpx.HTTPError, ModerationUnreadable, ValueError) as exc:
            log.warning("moderation service %s failed; the local layers decide: %s", self.config.url, exc)
            await self._count("moderation.error")
        return False

    async def _ask(self, text: str) -> bool:
        """One request of the configured kind, read by its kind."""
        config = self.config
        if config.kind == "openai":
            response = await self._client.post("moderations", json={"model": config.model, "input": text})
            response.raise_for_status()
            return openai_flags(response.json())
        response = await self._client.post("chat/completions", json={
            "model": config.model, "messages": [{"role": "user", "content": text}], "max_tokens": 20,
            "temperature": 0})
        response.raise_for_status()
        return llama_guard_flags(response.json())

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()
