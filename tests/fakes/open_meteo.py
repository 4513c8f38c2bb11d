"""A local fake of an Open-Meteo-compatible forecast endpoint on 127.0.0.1: records requests, answers a day."""
from __future__ import annotations

from types import TracebackType
from typing import Any

from aiohttp import web


class FakeOpenMeteo:
    """GET /v1/forecast answers `daily` for the asked day; `status` other than 200 answers an error."""

    def __init__(self, low: float = 8.4, high: float = 13.6, rain: int = 70, code: int = 61) -> None:
        self.daily = {"temperature_2m_min": [low], "temperature_2m_max": [high],
                      "precipitation_probability_max": [rain], "weather_code": [code]}
        self.status = 200
        self.requests: list[dict[str, str]] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def _forecast(self, request: web.Request) -> web.Response:
        self.requests.append(dict(request.query))
        if self.status != 200:
            return web.json_response({"error": True, "reason": "down"}, status=self.status)
        body: dict[str, Any] = {"latitude": float(request.query["latitude"]),
                                "longitude": float(request.query["longitude"]),
                                "timezone": request.query.get("timezone", "GMT"),
                                "daily": {"time": [request.query["start_date"]], **self.daily}}
        return web.json_response(body)

    async def __aenter__(self) -> FakeOpenMeteo:
        app = web.Application()
        app.router.add_get("/v1/forecast", self._forecast)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/v1/forecast"
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
