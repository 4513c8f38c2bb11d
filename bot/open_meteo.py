"""The weather for the morning brief from an Open-Meteo-compatible forecast endpoint (MNEMO_WEATHER_URL)."""
from __future__ import annotations

from datetime import date
from typing import Any

import httpx

from bot import tls
from scheduler.ports import Forecast

DAILY = "temperature_2m_min,temperature_2m_max,precipitation_probability_max,weather_code"


class OpenMeteo:
    """The `Weather` port over HTTP: GET {url}?latitude=…&longitude=…&daily=…&timezone=…&start_date=…&end_date=…."""

    def __init__(self, url: str, timeout: float = 10.0, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url, self.timeout, self.transport = url, timeout, transport

    async def forecast(self, latitude: float, longitude: float, day: date, zone: str) -> Forecast:
        """The day's low and high, chance of rain and weather code; raise on an error or an answer without them."""
        params: dict[str, Any] = {"latitude": latitude, "longitude": longitude, "daily": DAILY, "timezone": zone,
                                  "start_date": day.isoformat(), "end_date": day.isoformat()}
        async with httpx.AsyncClient(timeout=self.timeout, transport=self.transport, verify=tls.context()) as client:
            response = await client.get(self.url, params=params)
            response.raise_for_status()
            daily = response.json()["daily"]
        rain, code = daily.get("precipitation_probability_max") or [None], daily.get("weather_code") or [None]
        return Forecast(float(daily["temperature_2m_min"][0]), float(daily["temperature_2m_max"][0]),
                        int(rain[0]) if rain[0] is not None else None, int(code[0]) if code[0] is not None else None)
