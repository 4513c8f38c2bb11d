"""What the scheduler needs from the outside, as small ports the bot package fills in."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Protocol

from memory import ButtonRows, Scope


class Writer(Protocol):
    """A model that writes a text from instructions and material (the background model)."""

    async def __call__(self, instructions: str, material: str, *, max_tokens: int = 800) -> str:
        """Return the model's text; raise on failure."""
        ...


class Composer(Protocol):
    """Writes a proactive message with the normal conversation prompt plus a reason."""

    async def compose_proactive(self, scope: Scope, reason: str, detail: str) -> str:
        """Return the message to send (empty when the model declines); raise on failure."""
        ...


class Sender(Protocol):
    """Delivers a message to a user on their channel."""

    async def deliver(self, scope: Scope, text: str, *, buttons: ButtonRows = ()) -> bool:
        """Send text (with buttons under it, if any) to the scope's user; True when it was delivered."""
        ...


@dataclass(frozen=True)
class Forecast:
    """One day's weather at a place: temperatures in °C, the chance of rain in percent, a WMO weather code."""

    low: float
    high: float
    rain_chance: int | None = None
    code: int | None = None


class Weather(Protocol):
    """A weather service (an Open-Meteo-compatible endpoint in the bot)."""

    async def forecast(self, latitude: float, longitude: float, day: date, zone: str) -> Forecast:
        """The forecast for a local day at a place; raise on failure."""
        ...


class JobRuns(Protocol):
    """Counts the jobs that ran (the bot's metrics fill it in)."""

    def job_ran(self, job: str, outcome: str) -> None:
        """A job of this kind ('planner', 'diary', …) ran: 'ok', 'failed' or 'skipped'."""
