"""Reading one web page: only http(s), only public addresses, a few redirects, a time and a size limit; HTML to text.

Every hop is checked before it is fetched: its scheme, and every address its host resolves to (getaddrinfo); a
private, loopback, link-local, unspecified, multicast or reserved one is refused unless the operator allows the
host by name (MNEMO_WEB_ALLOW_HOSTS). The connection then goes to an address that was checked (the URL names the
address, the Host header and TLS name the host), so a second DNS answer cannot send it elsewhere. Redirects are
followed here, one hop at a time, each checked again; an allowed host counts as allowed only while every hop
before it was on one too, so a public page cannot redirect the read into the operator's network. The body is
streamed and cut at the size limit (a compressed one as it is decoded); the whole read has one time limit. The
main text is found with trafilatura.
"""
from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import ssl
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import httpx

from bot.web_tools.errors import PageFailed, PageRefused
from bot.web_tools.search import USER_AGENT

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", ""})  # no type given: read it as HTML
TEXT_TYPES = HTML_TYPES | {"text/plain"}
COMPRESSED = frozenset({"gzip", "x-gzip", "deflate"})  # what a server that ignores `Accept-Encoding` may send
# What makes an address not public, in the order it is named.
_NOT_PUBLIC = ("loopback", "link_local", "unspecified", "multicast", "reserved", "private")


@dataclass(frozen=True)
class Page:
    """A page's main text, from where it was found (after redirects)."""

    url: str
    title: str
    text: str
    size: int  # bytes read
    cut: bool  # the page was longer than the size limit: its text is that of the first bytes


class Pages(Protocol):
    """Reads web pages."""

    async def read(self, url: str) -> Page:
        """The page's main text; raise PageRefused or PageFailed when it may not or cannot be read."""
        ...


def refusal(address: str) -> str | None:
    """Why an IP address may not be fetched ('loopback', 'private', …), or None for a public one."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 address may carry its zone: fe80::1%eth0
    if isinstance(ip, ipaddress.IPv6Address):
        ip = ip.ipv4_mapped or ip.sixtofour or ip  # ::ffff:127.0.0.1 and 2002:7f00:1:: are 127.0.0.1
    for kind in _NOT_PUBLIC:
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if ip.is_global else "non-public"


def host_name(host: str) -> str:
    """A host as the allow list compares it: lower case, without brackets or a trailing dot."""
    return host.strip().strip("[]").rstrip(".").lower()


def still_allowed(so_far: bool, host: str, allowed: frozenset[str]) -> bool:
    """Whether a hop's host may be at a private address: it is allowed, and so was every hop before it (a public
    page cannot redirect a read into the operator's network)."""
    return so_far and host_name(host) in allowed


def checked_url(url: str | httpx.URL) -> httpx.URL:
    """The URL if it is one to fetch (http or https, with a host); PageRefused otherwise."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise PageRefused(f"{str(url)[:200]!r} is not a web address") from exc
    if parsed.scheme not in ("http", "https"):
        raise PageRefused(f"only http and https pages are read, not {parsed.scheme or 'this'!r}")
    if not parsed.host:
        raise PageRefused(f"{str(url)[:200]!r} names no host")
    return parsed


class PageReader:
    """The `Pages` port over HTTP, with the checks and limits above."""

    def __init__(self, allow_hosts: Iterable[str] = (), timeout: float = 10.0, max_bytes: int = 2_000_000,
                 verify: ssl.SSLContext | bool = True) -> None:
        self.allowed = frozenset(host_name(h) for h in allow_hosts if h.strip())
        self.timeout, self.max_bytes = timeout, max_bytes
        # The transport alone (no client): no cookies kept between people, no redirects followed behind our back;
        # no connection kept open, so one host's TLS connection never carries another host's request.
        self.transport = httpx.AsyncHTTPTransport(verify=verify, limits=httpx.Limits(max_keepalive_connections=0))

    async def read(self, url: str) -> Page:
        """The page's main text; PageRefused or PageFailed when it may not or cannot be read."""
        try:
            async with asyncio.timeout(self.timeout):
                found, body, kind, charset, cut = await self._fetch(checked_url(url))
        except TimeoutError as exc:
            raise PageFailed(f"the page did not arrive within {self.timeout:g} s") from exc
        title, text = await asyncio.to_thread(page_text, body, kind, charset, str(found))
        if not text.strip():
            raise PageFailed("the page has no readable text")
        return Page(str(found), title, text, len(body), cut)

    async def aclose(self) -> None:
        """Close the transport."""
        await self.transport.aclose()

    async def _fetch(self, url: httpx.URL) -> tuple[httpx.URL, bytes, str, str | None, bool]:
        """Follow the redirects from `url`, each hop checked; the last one's body (cut at the limit) and type."""
        allowed = True
        for _ in range(MAX_REDIRECTS + 1):
            allowed = still_allowed(allowed, url.host, self.allowed)
            response = await self._open(url, await self._addresses(url, allowed))
            try:
                status, location = response.status_code, response.headers.get("location")
                if status in REDIRECTS and location:
                    url = checked_url(url.join(location.strip()))
                    continue
                if status >= 300:
                    raise PageFailed(f"the server answered with status {status}")
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind not in TEXT_TYPES:
                    raise PageFailed(f"the address is not a page of text ({kind})")
                body, cut = await _body(response, self.max_bytes)
                return url, body, kind, response.charset_encoding, cut
            except httpx.HTTPError as exc:
                raise PageFailed(f"the page broke off ({type(exc).__name__})") from exc
            finally:
                await response.aclose()
        raise PageRefused(f"the page redirects more than {MAX_REDIRECTS} times")

    async def _addresses(self, url: httpx.URL, allowed: bool) -> list[str]:
        """Every address the URL's host resolves to, each checked unless the host is `allowed` by name."""
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise PageFailed(f"the host {host} was not found") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not allowed:
            for address in addresses:
                reason = refusal(address)
                if reason:
                    log.warning("refused to read a page whose host is at a %s address (%s)", reason, address)
                    log.debug("refused to read %s: %s is at %s", url, host, address)
                    raise PageRefused(f"{host} is at a {reason} address; only public addresses are read")
        return addresses

    async def _open(self, url: httpx.URL, addresses: list[str]) -> httpx.Response:
        """Send the request to the first checked address that takes the connection; the response is streamed."""
        failure: httpx.HTTPError | None = None
        for address in addresses:
            request = httpx.Request("GET", url.copy_with(host=address), headers={
                "Host": url.netloc.decode("ascii"), "User-Agent": USER_AGENT, "Accept-Encoding": "identity",
                "Accept": "text/html, application/xhtml+xml, text/plain;q=0.9, */*;q=0.1",
            }, extensions={"timeout": httpx.Timeout(self.timeout).as_dict(), "sni_hostname": url.host})
            try:
                return await self.transport.handle_async_request(request)
            except httpx.ConnectError as exc:
                if _tls_failure(exc):  # the host's certificate: another of its addresses would show the same
                    raise PageFailed(f"the TLS certificate of {url.host} could not be verified") from exc
                failure = exc
            except httpx.HTTPError as exc:
                raise PageFailed(f"the page could not be fetched ({type(exc).__name__})") from exc
        raise PageFailed(f"{url.host} could not be reached") from failure


def _tls_failure(exc: BaseException) -> bool:
    """Whether a connection failed in its TLS handshake (httpx reports it as a ConnectError caused by it)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class Decoded:
    """A body decoded as it streams in (as it is, or gzip or deflate) and cut at max_bytes: each raw piece is
    decompressed only up to the room left, so a small compressed body cannot grow past the limit in memory."""

    def __init__(self, content_encoding: str, max_bytes: int) -> None:
        codings = [c for c in (c.strip().lower() for c in content_encoding.split(",")) if c not in ("", "identity")]
        if len(codings) > 1 or (codings and codings[0] not in COMPRESSED):
            raise PageFailed(f"the page is compressed in a way that is not read ({content_encoding[:50]})")
        # wbits | 32: zlib finds out from the header whether it is gzip or deflate (zlib) data
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 32) if codings else None
        self.room, self.cut = max_bytes, False

    def feed(self, raw: bytes) -> bytes:
        """The next piece of the decoded body, never more than the room left; `cut` is set when there was more."""
        piece = raw
        if self._zlib is not None:
            try:
                piece = self._zlib.decompress(raw, self.room + 1)  # one byte more tells that there is more
            except zlib.error as exc:
                raise PageFailed("the page's compressed body is damaged") from exc
        if len(piece) > self.room:
            piece, self.cut = piece[:self.room], True
        self.room -= len(piece)
        return piece


async def _body(response: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """The body up to max_bytes (decoded), streamed; True when there was more (the rest is never read). A server
    may compress although asked not to: the body is then decoded here, within the limit, not by httpx."""
    decoded, chunks = Decoded(response.headers.get("content-encoding", ""), max_bytes), []
    async for raw in response.aiter_raw():
        chunks.append(decoded.feed(raw))
        if decoded.cut:
            break
    return b"".join(chunks), decoded.cut


def page_text(body: bytes, kind: str, charset: str | None, url: str) -> tuple[str, str]:
    """The title and main text of a page (plain text as it is; HTML through trafilatura, its whole text if it
    finds no main part)."""
    try:
        decoded: str | bytes = body.decode(charset, errors="replace") if charset else body
    except LookupError:  # a charset Python does not know: trafilatura guesses
        decoded = body
    if kind == "text/plain":
        return "", decoded if isinstance(decoded, str) else body.decode("utf-8", errors="replace")
    import trafilatura  # here, not at the top: a fifth of a second at every start, and most never read a page

    document = trafilatura.bare_extraction(decoded, url=url, with_metadata=True, include_comments=False,
                                           include_tables=True)
    text = str(getattr(document, "text", "") or "")
    if not text.strip():
        text = trafilatura.html2txt(decoded) or ""
    return str(getattr(document, "title", "") or ""), text
