"""The line under a reply that names the sites its outside text came from, written by the program (never the model)."""
from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from bot.texts import t

MAX_HOSTS = 5  # named in the line; more are counted ("+2")


def site(url: str) -> str:
    """A URL's site as a person reads it: the host without 'www.'."""
    host = (urlsplit(url).hostname or "").rstrip(".")
    return host[4:] if host.startswith("www.") else host


def sources_line(urls: Sequence[str], lang: str) -> str:
    """'Quellen: example.org, wikipedia.org' for the URLs, each site once, in order; '' for none."""
    sites = [s for s in dict.fromkeys(site(url) for url in urls) if s]
    if not sites:
        return ""
    named = ", ".join(sites[:MAX_HOSTS]) + (f" +{len(sites) - MAX_HOSTS}" if len(sites) > MAX_HOSTS else "")
    return t(lang, "web_sources", hosts=named)


def with_sources(text: str, urls: Sequence[str], lang: str) -> str:
    """The reply with the sources line under it (a reply without text gets none)."""
    line = sources_line(urls, lang)
    return f"{text.rstrip()}\n{line}" if line and text.strip() else text
