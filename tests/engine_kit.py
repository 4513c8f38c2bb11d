"""How tests make mnemo's parts: its settings (no .env file read)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.settings import Settings


def settings_for(data_dir: Path, **fields: Any) -> Settings:
    """Settings with the data in `data_dir` and the given fields, the rest their defaults (no .env file is read)."""
    return Settings(_env_file=None, data_dir=data_dir, **fields)  # type: ignore[call-arg]
