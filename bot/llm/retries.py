"""What both LLM providers share: the client base (retries, error mapping, ping, close), retry-after parsing,
redaction."""
from __future__ import annotations

import email.utils
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any, Generic, Protocol, TypeVar

import httpx

from bot.errors import LLMBadOutput, LLMError, LLMRateLimited, LLMRefused, LLMRejected, LLMTooLong, LLMUnavailable
from bot.llm.port import backoff_delays

log = logging.getLogger(__name__)

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[Any]]


class SDKClient(Protocol):
    """What the OpenAI-compatible client (`bot.llm.openai_wire`) and the anthropic SDK client both offer."""

    @property
    def base_url(self) -> Any:
        """Where the client sends its requests."""
        ...

    @property
    def models(self) -> Any:
        """The models endpoint (its list() is the cheapest call there is)."""
        ...

    async def close(self) -> None:
        """Close the HTTP connections."""
        ...


C = TypeVar("C", bound=SDKClient)

MAX_RETRY_AFTER = 30.0
# How providers say a prompt is over the model's context (OpenAI, vLLM, Anthropic, llama.cpp, LiteLLM).
_TOO_LONG = re.compile(r"context[ _](length|size|window)|prompt is too long|too many tokens|maximum.{0,40}tokens",
                       re.IGNORECASE)


class SDKChat(Generic[C]):
    """The part of a provider's adapter that is the same for both SDKs: retries, error mapping, ping and close."""

    def __init__(self, sdk: ModuleType, make_client: Callable[[], C], model: str, api_key: str | None,
                 timeout: float, attempts: int, sleep: Sleep) -> None:
        """Create the client; `attempts` counts the first try, `sleep` lets tests skip real waiting."""
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {attempts}")
        self.model = model
        self._sdk, self._api_key, self._timeout, self._attempts, self._sleep = sdk, api_key, timeout, attempts, sleep
        self._client = make_client()
        self._where = f"model {model!r} at {self._client.base_url}"

    async def ping(self) -> None:
        """Check once that the endpoint answers (and accepts the key), by listing its models."""
        await self._call(self._client.models.list, attempts=1)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    async def _call(self, call: Callable[[], Awaitable[T]], attempts: int | None = None) -> T:
        """Run an SDK call with this client's retry policy and error mapping."""
        return await with_retries(call, self._error, (self._sdk.APIError, httpx.TransportError),
                                  attempts or self._attempts, self._sleep)

    def _error(self, exc: Exception, attempt: int) -> LLMError:
        """The LLMError for an SDK error after `attempt` tries; never mentions the API key."""
        return sdk_error(self._sdk, exc, self._where, self._timeout, self._api_key, attempt)


def sdk_error(sdk: ModuleType, exc: Exception, where: str, timeout: float, secret: str | None,
              attempt: int) -> LLMError:
    """The LLMError for an error of `bot.llm.openai_wire` or the anthropic SDK (same class names) after `attempt`
    tries."""
    if isinstance(exc, httpx.TransportError):  # a stream that broke off after the response began
        return LLMUnavailable(f"{where} broke off while answering: {exc!r} (attempt {attempt})")
    if isinstance(exc, sdk.APITimeoutError):
        return LLMUnavailable(f"{where} did not answer within {timeout:g} s (attempt {attempt})")
    if isinstance(exc, sdk.APIStatusError):
        detail = redact(error_detail(exc.body, exc.message), secret)
        return status_error(where, exc.status_code, detail, attempt)
    if isinstance(exc, sdk.APIConnectionError):
        return LLMUnavailable(f"cannot reach {where}: {exc.__cause__ or exc} (attempt {attempt})")
    return LLMBadOutput(f"{where} gave an unreadable answer: {redact(str(exc), secret)}")


async def with_retries(
    call: Callable[[], Awaitable[T]],
    to_llm_error: Callable[[Exception, int], LLMError],
    catch: type[Exception] | tuple[type[Exception], ...],
    attempts: int,
    sleep: Sleep,
) -> T:
    """Run call; retry rate limits and outages after backoff_delays (or the server's retry-after), else raise.

    Args:
        to_llm_error: maps a caught SDK error and the attempt number to the LLMError to raise.
        catch: the SDK's base error class; anything else propagates untouched.
    """
    delays = backoff_delays(attempts)
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except catch as exc:
            error = to_llm_error(exc, attempt)
            if attempt >= attempts or not isinstance(error, (LLMRateLimited, LLMUnavailable)):
                raise error from exc
            delay = retry_after(exc) or delays[attempt - 1]
            log.warning("%s; retrying in %.1f s", error, delay)
            await sleep(delay)


def status_error(where: str, status: int, detail: str, attempt: int) -> LLMError:
    """The LLMError for an HTTP error status: 429 rate limited, 408/5xx unavailable, 401/403 a wrong key, 404 a wrong
    model or URL, 413 or a 400 naming the context a prompt too long, other 4xx rejected."""
    if status == 429:
        return LLMRateLimited(f"{where} answered 429 (rate limited) on attempt {attempt}: {detail}")
    if status >= 500 or status == 408:
        return LLMUnavailable(f"{where} answered {status} on attempt {attempt}: {detail}")
    if status in (401, 403):
        return LLMRefused(f"{where} refused the API key with {status}: {detail}", "key")
    if status == 404:
        return LLMRefused(f"{where} answered 404 (no such model or endpoint): {detail}", "model")
    if status == 413 or (status == 400 and _TOO_LONG.search(detail)):
        return LLMTooLong(f"{where} found the prompt longer than its context ({status}): {detail}")
    return LLMRejected(f"{where} rejected the request with {status}: {detail}")


def schema_instruction(schema: dict[str, Any]) -> str:
    """System-prompt text asking for a reply that is only JSON of the given schema."""
    return (
        "Answer only with one JSON document that matches this JSON schema, "
        "without any other text and without code fences:\n" + json.dumps(schema, ensure_ascii=False)
    )


def retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, retry-after seconds or date), capped at 30 s."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    seconds = parse_retry_after(response.headers)
    return None if seconds is None else min(max(seconds, 0.0), MAX_RETRY_AFTER)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a response's headers ask for, in seconds, or None."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    parsed = email.utils.parsedate_tz(value)
    return None if parsed is None else email.utils.mktime_tz(parsed) - time.time()


def _number(text: str | None) -> float | None:
    """The text as a float, or None if it is missing or not a number."""
    try:
        return None if text is None else float(text)
    except ValueError:
        return None


def error_detail(body: object, fallback: str) -> str:
    """The server's error message from an error body, shortened."""
    if isinstance(body, dict):
        inner = body.get("error")
        message = inner.get("message") if isinstance(inner, dict) else body.get("message")
        if isinstance(message, str) and message:
            return message[:300]
    return fallback[:300]


def redact(text: str, secret: str | None) -> str:
    """The text with the secret (an API key a server echoed back) blanked out."""
    return text.replace(secret, "***") if secret else text
