"""One line of weather for the morning brief (pure), from a `Forecast` and the person's place setting."""
from __future__ import annotations

from scheduler.ports import Forecast

# WMO weather codes (as Open-Meteo reports them) in words, by the first code of each group.
_WORDS = {
    "de": ((0, "klar"), (1, "heiter"), (2, "wolkig"), (3, "bedeckt"), (45, "Nebel"), (51, "Nieselregen"),
           (61, "Regen"), (71, "Schnee"), (80, "Regenschauer"), (85, "Schneeschauer"), (95, "Gewitter")),
    "en": ((0, "clear"), (1, "mostly clear"), (2, "partly cloudy"), (3, "overcast"), (45, "fog"), (51, "drizzle"),
           (61, "rain"), (71, "snow"), (80, "showers"), (85, "snow showers"), (95, "thunderstorms")),
}
_LINE = {"de": "Wetter: {words}{low}–{high} °C{rain}", "en": "Weather: {words}{low}–{high} °C{rain}"}
_RAIN = {"de": ", Regenrisiko {chance} %", "en": ", chance of rain {chance} %"}


def weather_words(code: int | None, lang: str) -> str:
    """The WMO code in words ('' when unknown)."""
    if code is None:
        return ""
    words = [w for first, w in _WORDS.get(lang, _WORDS["de"]) if first <= code]
    return words[-1] if words else ""


def weather_line(forecast: Forecast, lang: str) -> str:
    """'Wetter: Regen, 8–13 °C, Regenrisiko 70 %'."""
    words = weather_words(forecast.code, lang)
    rain = _RAIN.get(lang, _RAIN["de"]).format(chance=forecast.rain_chance) if forecast.rain_chance else ""
    return _LINE.get(lang, _LINE["de"]).format(words=f"{words}, " if words else "", low=round(forecast.low),
                                               high=round(forecast.high), rain=rain)
