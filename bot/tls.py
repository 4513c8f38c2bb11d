"""One TLS context for every HTTP client mnemo makes (the chat model, the messengers' Bot API, web search, moderation).

httpx builds a new context for each client it creates, and building one reads the whole certificate bundle: 35-70 ms
of CPU per client (the Telegram channel alone makes two). The context is made once, the way httpx makes its default
(certifi's bundle, or SSL_CERT_FILE / SSL_CERT_DIR when set), and shared: it holds no per-connection state.
"""
from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def context() -> ssl.SSLContext:
    """The process's TLS context for verified HTTPS, made on first use."""
    return httpx.create_ssl_context()
