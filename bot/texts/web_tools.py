"""What mnemo says about the web on its own: the sources line under a reply, the day's count in /settings."""
from __future__ import annotations

WEB_TEXTS: dict[str, dict[str, str]] = {
    "web_sources": {"de": "Quellen: {hosts}", "en": "Sources: {hosts}"},
    "settings_web": {
        "de": "Websuche heute: {count} von {limit} (Suchen und gelesene Seiten)",
        "en": "Web today: {count} of {limit} (searches and pages read)",
    },
    "settings_web_unlimited": {
        "de": "Websuche heute: {count} (Suchen und gelesene Seiten)",
        "en": "Web today: {count} (searches and pages read)",
    },
}
