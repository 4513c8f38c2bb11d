"""The web app: the operator's endpoints (/metrics, /healthz) and, later, the web page's routes beside them.

Every route of the operator's is wrapped in `operator_only`: a client on this machine (loopback, no proxy's
header) or one with `Authorization: Bearer <MNEMO_METRICS_TOKEN>`; anyone else gets 403. X-Forwarded-For is never
trusted (uvicorn runs without proxy headers), so behind a reverse proxy the token is needed.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from bot.web_page.health import Running, health
from bot.web_page.operator_access import operator_may
from bot.web_page.prometheus import PrometheusMetrics

PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"

Endpoint = Callable[[Request], Awaitable[Response]]


def operator_only(endpoint: Endpoint, token: str | None) -> Endpoint:
    """The endpoint for the operator: from this machine, or with the token; else 403."""

    async def guarded(request: Request) -> Response:
        host = request.client.host if request.client else None
        if not operator_may(host, request.headers, token):
            return PlainTextResponse("forbidden: from this machine, or with the operator token\n", status_code=403)
        return await endpoint(request)

    return guarded


def operator_routes(running: Running, metrics: PrometheusMetrics, token: str | None) -> list[BaseRoute]:
    """/metrics (Prometheus text format) and /healthz (JSON; 503 while the database does not answer)."""

    async def metrics_page(request: Request) -> Response:
        return Response(await metrics.render(running.store, running.budget), media_type=PROMETHEUS_TEXT)

    async def healthz(request: Request) -> Response:
        status, body = await health(running)
        return JSONResponse(body, status_code=status)

    return [
        Route("/metrics", operator_only(metrics_page, token), methods=["GET"]),
        Route("/healthz", operator_only(healthz, token), methods=["GET"]),
    ]


def make_app(running: Running, metrics: PrometheusMetrics, token: str | None,
             pages: Sequence[BaseRoute] = ()) -> Starlette:
    """The app: the operator's routes, then `pages` (the web page's routes, with their own login, go here)."""
    return Starlette(routes=[*operator_routes(running, metrics, token), *pages])
