"""Security headers on every answer of the web server (pure ASGI middleware)."""
from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Only the page's own scripts, styles and forms; no framing; no referrer (a login link must not leak through one).
BASE_HEADERS = {
    "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=()",
}


class SecurityHeaders:
    """Adds BASE_HEADERS, `Cache-Control: no-store` on everything but static files, and HSTS behind HTTPS."""

    def __init__(self, app: ASGIApp, secure: bool) -> None:
        self.app, self.secure = app, secure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = str(scope.get("path", "")).startswith("/web/static/")

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                extra = dict(BASE_HEADERS)
                extra["cache-control"] = "public, max-age=3600" if static else "no-store"
                if self.secure:
                    extra["strict-transport-security"] = "max-age=31536000"
                headers += [(k.encode(), v.encode()) for k, v in extra.items() if k.encode() not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)
