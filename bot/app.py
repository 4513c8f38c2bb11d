"""Wire settings, store, models, engine and channels; start them and stop them in reverse."""
from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import AsyncIterator

from bot.engine import Engine, EngineConfig
from bot.errors import LLMError
from bot.llm import LLM
from bot.llm_factory import make_llm
from bot.settings import Settings
from bot.texts import t
from memory.embedder import make_embedder
from memory.store import MemoryStore

log = logging.getLogger(__name__)


def engine_config(settings: Settings) -> EngineConfig:
    """The engine's part of the settings."""
    return EngineConfig(
        companion_id=settings.companion_id, companion_name=settings.companion_name, persona=settings.persona,
        language=settings.language, zone=settings.zone, recent_messages=settings.recent_messages,
        max_message_chars=settings.max_message_chars, relevance_floor=settings.relevance_floor,
        crisis_country=settings.crisis_country, extraction=settings.extraction,
        extraction_quiet_seconds=settings.extraction_quiet_seconds,
    )


def make_models(settings: Settings) -> tuple[LLM, LLM]:
    """The chat model and the background model (the chat model's settings where none are given)."""
    chat = make_llm(settings.chat_provider, settings.chat_model, settings.chat_base_url, settings.chat_api_key,
                    settings.llm_timeout)
    if not (settings.background_model or settings.background_provider or settings.background_base_url):
        return chat, chat
    background = make_llm(
        settings.background_provider or settings.chat_provider,
        settings.background_model or settings.chat_model,
        settings.background_base_url or settings.chat_base_url,
        settings.background_api_key or settings.chat_api_key,
        settings.llm_timeout,
    )
    return chat, background


@contextlib.asynccontextmanager
async def running_engine(settings: Settings) -> AsyncIterator[Engine]:
    """Open the store and the models, yield the engine, and close everything in reverse."""
    embedder = await asyncio.to_thread(make_embedder, settings.embedding_model)
    store = await MemoryStore.open(settings.data_dir, embedder, semantic_dedupe=settings.dedupe_threshold)
    chat, background = make_models(settings)
    engine = Engine(store, chat, background, engine_config(settings))
    try:
        yield engine
    finally:
        await engine.drain()
        await engine.close()
        for llm in {id(chat): chat, id(background): background}.values():
            close = getattr(llm, "aclose", None)
            if close:
                await close()
        await store.close()


async def check_model(settings: Settings, llm: LLM) -> str | None:
    """One sentence saying what to set when the chat model does not answer, else None."""
    ping = getattr(llm, "ping", None)
    if ping is None:
        return None
    try:
        await ping()
    except LLMError as exc:
        log.info("chat model check failed: %s", exc)
        return t(settings.language, "no_model_hint", url=settings.chat_base_url or settings.chat_provider)
    return None


async def main(settings: Settings) -> None:
    """Run the configured channels until they end or the process is stopped."""
    from bot.console import ConsoleChannel

    channels = settings.active_channels
    async with running_engine(settings) as engine:
        hint = await check_model(settings, engine.chat)
        if hint:
            print(hint, flush=True)
        if channels != ["console"]:
            unknown = [c for c in channels if c != "console"]
            log.error("channels not available in this version: %s", ", ".join(unknown))
        await ConsoleChannel(engine).run()
