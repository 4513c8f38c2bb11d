"""The OpenAI-compatible HTTP API over httpx: JSON requests, streamed server-sent events, raw bytes and uploads.

mnemo used the official openai SDK for this; importing it took about a second at every start (its thousands of
typed models), which a restart after a crash waits for. The errors keep the SDK's names, so `bot.llm.retries`
maps this client and the Anthropic SDK alike: APIStatusError (an HTTP error status, with the parsed body),
APITimeoutError, APIConnectionError, and APIError itself for an answer that cannot be read.
"""
from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from bot import tls

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class APIError(Exception):
    """Anything the endpoint did wrong; the base of the others (on its own: an answer that cannot be read)."""

    def __init__(self, message: str, body: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.body = body


class APIConnectionError(APIError):
    """The endpoint could not be reached (refused, name unknown, reset before answering)."""


class APITimeoutError(APIConnectionError):
    """The endpoint did not answer within the timeout."""


class APIStatusError(APIError):
    """The endpoint answered with an HTTP error status; `body` is its JSON (or text), `response` has the headers."""

    def __init__(self, response: httpx.Response, body: object) -> None:
        super().__init__(f"Error code: {response.status_code} - {body}", body)
        self.response = response
        self.status_code = response.status_code


class Models:
    """The model list, the cheapest request there is (what `ping` sends)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def list(self) -> Any:
        """GET /models."""
        return await self._client.get("models")


class Client:
    """One endpoint with its key and timeout; every request raises only the errors above (and httpx's
    TransportError when a stream breaks off after it began)."""

    def __init__(self, base_url: str | None, api_key: str, timeout: float) -> None:
        self.base_url = httpx.URL((base_url or DEFAULT_BASE_URL).rstrip("/") + "/")
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout, verify=tls.context(),
                                       headers={"Authorization": f"Bearer {api_key}"})
        self.models = Models(self)

    async def get(self, path: str) -> Any:
        """GET path; its JSON."""
        return _json(await self._send(self._http.build_request("GET", path)))

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST a JSON body; the answer's JSON."""
        return _json(await self._send(self._http.build_request("POST", path, json=body)))

    async def post_raw(self, path: str, body: Mapping[str, Any]) -> bytes:
        """POST a JSON body; the answer's bytes (audio)."""
        return (await self._send(self._http.build_request("POST", path, json=body))).content

    async def upload(self, path: str, file: tuple[str, bytes, str], fields: Mapping[str, str]) -> Any:
        """POST a multipart form with one file and some fields; the answer's JSON, or its text when it is none."""
        response = await self._send(self._http.build_request("POST", path, files={"file": file}, data=dict(fields)))
        try:
            return response.json()
        except ValueError:
            return response.text

    @contextlib.asynccontextmanager
    async def events(self, path: str, body: Mapping[str, Any]) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """POST a JSON body and read the answer as server-sent events: each `data:` line's JSON, up to [DONE]."""
        response = await self._send(self._http.build_request("POST", path, json=body), stream=True)
        try:
            yield _events(response)
        finally:
            await response.aclose()

    async def close(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def _send(self, request: httpx.Request, stream: bool = False) -> httpx.Response:
        """Send; an error status, a timeout or an unreachable endpoint as the errors above."""
        try:
            response = await self._http.send(request, stream=stream)
        except httpx.TimeoutException as exc:
            raise APITimeoutError("Request timed out.") from exc
        except httpx.TransportError as exc:
            raise APIConnectionError("Connection error.") from exc
        if response.is_success:
            return response
        try:
            await response.aread()
            body: object = response.json()
        except ValueError:
            body = response.text
        finally:
            await response.aclose()
        raise APIStatusError(response, body)


def _json(response: httpx.Response) -> Any:
    """The answer's JSON, or APIError."""
    try:
        return response.json()
    except ValueError as exc:
        log.debug("an answer that is not JSON: %r", response.text[:500])
        raise APIError(f"the answer is not JSON ({len(response.text)} characters)") from exc


async def _events(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of the `data:` lines; an `error` object sent inside the stream raises APIError."""
    async for line in response.aiter_lines():
        if not line.startswith("data:"):
            continue  # blank lines between events, `event:` names, `:` comments
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except ValueError as exc:
            log.debug("a streamed event that is not JSON: %r", data[:500])
            raise APIError(f"a streamed event is not JSON ({len(data)} characters)") from exc
        if not isinstance(event, dict):
            log.debug("a streamed event that is not an object: %r", data[:500])
            raise APIError(f"a streamed event is not an object ({type(event).__name__})")
        if event.get("error"):
            raise APIError(str(event["error"])[:300], event)
        yield event
