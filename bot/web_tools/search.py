"""The `WebSearch` port and its backends: a self-hosted SearXNG (its JSON API), the Brave Search API, Tavily."""
from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from bot import tls
from bot.errors import ConfigError
from bot.settings import BRAVE_URL, TAVILY_URL
from bot.web_tools.errors import SearchFailed

USER_AGENT = "mnemo/0.1 (a personal companion)"
BACKENDS = ("off", "searxng", "brave", "tavily")

_TAG = re.compile(r"<[^>]{0,200}>")  # Brave marks the query words in its snippets: <strong>Leipzig</strong>


@dataclass(frozen=True)
class SearchResult:
    """One hit: its title, its address and the backend's snippet of it."""

    title: str
    url: str
    snippet: str


class WebSearch(Protocol):
    """A web search engine."""

    async def search(self, query: str, count: int) -> list[SearchResult]:
        """Up to `count` results for the query; raise SearchFailed when the engine fails."""
        ...


def plain(text: object) -> str:
    """A field of a search answer as plain text: tags dropped, entities decoded, spaces collapsed."""
    if not isinstance(text, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", text)).split())


def results_of(items: object, snippet: str, count: int) -> list[SearchResult]:
    """The usable hits of an answer's list: an http(s) address each; `snippet` names the field of the text."""
    if not isinstance(items, list):
        raise SearchFailed("the search engine answered without a list of results")
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            continue
        found.append(SearchResult(plain(item.get("title")) or url, url.strip(), plain(item.get(snippet))))
        if len(found) == count:
            break
    return found


class JsonSearch:
    """What the backends share: one HTTP client, a time limit for the whole request, errors mapped."""

    name = "the search engine"

    def __init__(self, url: str, timeout: float, headers: dict[str, str] | None = None) -> None:
        self.url, self.timeout = url, timeout
        self.client = httpx.AsyncClient(timeout=timeout, verify=tls.context(), headers={"User-Agent": USER_AGENT,
                                                                  "Accept": "application/json", **(headers or {})})

    async def answer(self, request: httpx.Request, hint: Callable[[int], str] = lambda status: "") -> Any:
        """The JSON the backend answers the request with; SearchFailed when there is none."""
        try:
            async with asyncio.timeout(self.timeout):
                response = await self.client.send(request)
        except TimeoutError as exc:
            raise SearchFailed(f"{self.name} did not answer within {self.timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise SearchFailed(f"{self.name} could not be reached ({type(exc).__name__})") from exc
        if response.status_code != 200:
            raise SearchFailed(f"{self.name} answered with status {response.status_code}"
                               f"{hint(response.status_code)}")
        try:
            data = response.json()
        except ValueError as exc:
            raise SearchFailed(f"{self.name} did not answer with JSON") from exc
        if not isinstance(data, dict):
            raise SearchFailed(f"{self.name} answered with JSON that is not an object")
        return data

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()


class SearXNG(JsonSearch):
    """A SearXNG instance: GET {url}/search?q=…&format=json (json must be in its `search.formats`)."""

    name = "SearXNG"

    def __init__(self, url: str, timeout: float) -> None:
        url = url.rstrip("/")
        super().__init__(url if url.endswith("/search") else f"{url}/search", timeout)

    async def search(self, query: str, count: int) -> list[SearchResult]:
        """Up to `count` results."""
        request = self.client.build_request("GET", self.url, params={"q": query, "format": "json"})
        data = await self.answer(request, lambda status: " (is json in its search.formats?)" if status == 403 else "")
        return results_of(data.get("results"), "content", count)


class Brave(JsonSearch):
    """The Brave Search API: GET {url}?q=…&count=… with the key in X-Subscription-Token."""

    name = "Brave Search"

    def __init__(self, key: str, timeout: float, url: str = BRAVE_URL) -> None:
        super().__init__(url, timeout, {"X-Subscription-Token": key})

    async def search(self, query: str, count: int) -> list[SearchResult]:
        """Up to `count` results (an answer without a `web` section has none)."""
        request = self.client.build_request("GET", self.url, params={"q": query, "count": count})
        web = (await self.answer(request)).get("web") or {"results": []}
        return results_of(web.get("results") if isinstance(web, dict) else None, "description", count)


class Tavily(JsonSearch):
    """The Tavily API: POST {url} with {"query", "max_results"} and the key as a bearer token."""

    name = "Tavily"

    def __init__(self, key: str, timeout: float, url: str = TAVILY_URL) -> None:
        super().__init__(url, timeout, {"Authorization": f"Bearer {key}"})

    async def search(self, query: str, count: int) -> list[SearchResult]:
        """Up to `count` results."""
        request = self.client.build_request("POST", self.url, json={"query": query, "max_results": count})
        return results_of((await self.answer(request)).get("results"), "content", count)


def make_search(backend: str, *, timeout: float, searxng_url: str | None = None, brave_key: str | None = None,
                brave_url: str = BRAVE_URL, tavily_key: str | None = None,
                tavily_url: str = TAVILY_URL) -> WebSearch | None:
    """The backend MNEMO_WEB_SEARCH names with its settings; None when it is off; ConfigError when one is missing."""
    if backend == "searxng":
        if not searxng_url:
            raise ConfigError("MNEMO_WEB_SEARCH=searxng needs MNEMO_SEARXNG_URL (e.g. http://127.0.0.1:8888).")
        return SearXNG(searxng_url, timeout)
    if backend == "brave":
        if not brave_key:
            raise ConfigError("MNEMO_WEB_SEARCH=brave needs MNEMO_BRAVE_API_KEY.")
        return Brave(brave_key, timeout, brave_url)
    if backend == "tavily":
        if not tavily_key:
            raise ConfigError("MNEMO_WEB_SEARCH=tavily needs MNEMO_TAVILY_API_KEY.")
        return Tavily(tavily_key, timeout, tavily_url)
    if backend != "off":
        raise ConfigError(f"MNEMO_WEB_SEARCH names an unknown backend {backend!r} (use {', '.join(BACKENDS)}).")
    return None
