"""How tests make mnemo's parts: its settings (no .env file read) and an engine on scripted models."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.tools import ToolBox
from bot.settings import Settings
from bot.voice.port import Speaker, Transcriber
from memory.store import MemoryStore
from tests.fakes.llm import ScriptedLLM


def settings_for(data_dir: Path, **fields: Any) -> Settings:
    """Settings with the data in `data_dir` and the given fields, the rest their defaults (no .env file is read)."""
    return Settings(_env_file=None, data_dir=data_dir, **fields)  # type: ignore[call-arg]


def nothing_learned() -> ScriptedLLM:
    """A background model whose every extraction finds nothing to learn."""
    llm = ScriptedLLM("background")
    llm.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    return llm


def make_engine(store: MemoryStore, chat: ScriptedLLM, toolboxes: Sequence[ToolBox] = (),
                clock: Callable[[], float] = time.time, *, background: ScriptedLLM | None = None,
                transcriber: Transcriber | None = None, speaker: Speaker | None = None, **config: Any) -> Engine:
    """An engine on the scripted `chat` model with every memory found (relevance floor 0); its background model
    learns nothing unless `background` is given; `config` sets EngineConfig's other fields."""
    return Engine(store, chat, nothing_learned() if background is None else background,
                  EngineConfig(relevance_floor=0.0, **config), clock=clock, toolboxes=toolboxes,
                  transcriber=transcriber, speaker=speaker)
