"""Errors of the web tools, mapped at the boundary (httpx, DNS, the search APIs' answers).

    WebError
    ├── SearchFailed     the search backend did not answer, or not with results in its format
    ├── PageRefused      the page may not be read: not http(s), a private address, too many redirects
    └── PageFailed       the page could not be read: no answer in time, an error status, no text in it

The toolbox turns each into a `ToolFailed`, whose message the model gets as the tool's result.
"""
from __future__ import annotations


class WebError(Exception):
    """Base of the web tools' errors; the message is one short sentence for the model."""


class SearchFailed(WebError):
    """The search backend did not answer, or answered with something that is not its results."""


class PageRefused(WebError):
    """The page is not read at all: its scheme, its address or its redirects are not allowed."""


class PageFailed(WebError):
    """The page could not be read: no answer in time, an error status, a file that is not text, no text in it."""
