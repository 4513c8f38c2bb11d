"""Wire settings, store, models, engine and channels; start them and stop them in reverse."""
from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from bot.channels.port import Messenger
from bot.channels.push import ChannelSender, Pushes
from bot.channels.sending import stop_task
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.commands.web_links import WebLinks, base_url
from bot.conversation.crisis import CrisisDetector, LayeredDetector, PatternDetector, local_detector
from bot.conversation.engine import Engine, EngineConfig
from bot.conversation.moderation import ModerationConfig, ModerationDetector
from bot.conversation.suggestion_tool import SuggestionBox
from bot.conversation.tools import ToolBox
from bot.embedding import make_embedders, make_reranking
from bot.errors import ConfigError, LLMError
from bot.llm.factory import make_llm
from bot.llm.metering import CountedLLM, MeteredLLM
from bot.llm.port import LLM
from bot.llm.vision import vision_on
from bot.llm.writer import LLMWriter
from bot.mcp.config import read_servers
from bot.metrics import NO_METRICS, Metrics
from bot.open_meteo import OpenMeteo
from bot.settings import Settings
from bot.texts import t
from bot.voice.recordings import move_old_files
from bot.web_page.health import ReportsCrypto, Running
from bot.web_tools.toolbox import web_tools
from memory import MemoryStore, MemoryStoreError, SuggestionLimits, Thresholds, is_postgres
from scheduler.budget import TokenBudget
from scheduler.leader import SchedulerLeader
from scheduler.service import Scheduler

if TYPE_CHECKING:  # imported where they are used: matrix-nio and the MCP SDK take seconds to import,
    # and a restart after a crash answers sooner without what the settings do not switch on
    from bot.channels.matrix.config import MatrixConfig
    from bot.voice.openai_audio import OpenAISpeaker, OpenAITranscriber
    from bot.web_page.prometheus import PrometheusMetrics
    from bot.web_page.site import Site

log = logging.getLogger(__name__)


def engine_config(settings: Settings, crisis_detector: CrisisDetector | None = None) -> EngineConfig:
    """The engine's part of the settings (without a detector: the crisis patterns alone)."""
    return EngineConfig(
        companion_id=settings.companion_id, companion_name=settings.companion_name, persona=settings.persona,
        language=settings.language, zone=settings.zone, recent_messages=settings.recent_messages,
        max_message_chars=settings.max_message_chars, relevance_floor=settings.relevance_floor,
        crisis_country=settings.crisis_country, extraction=settings.extraction,
        extraction_quiet_seconds=settings.extraction_quiet_seconds, profile_consent=settings.profile_consent,
        admission=Thresholds(settings.admission_min_score, settings.admission_contradiction),
        rate_limit_per_minute=settings.rate_limit_per_minute,
        reactions_per_day=settings.reactions_per_day if settings.reactions else 0,
        vision=vision_on(settings.vision, settings.chat_model), image_max_bytes=settings.image_max_bytes,
        image_max_pixels=settings.image_max_pixels, document_max_bytes=settings.document_max_bytes,
        document_max_pages=settings.document_max_pages, document_max_chars=settings.document_max_chars,
        document_max_seconds=settings.document_max_seconds,
        voice_max_bytes=settings.voice_max_bytes, voice_max_seconds=settings.voice_max_seconds,
        voice_keep=settings.voice_keep, speech_max_chars=settings.speech_max_chars,
        crisis_detector=crisis_detector or PatternDetector(), crisis_judge=settings.crisis_judge,
        crisis_judge_timeout=settings.crisis_judge_timeout,
    )


async def open_crisis_detector(settings: Settings, store: MemoryStore,
                               stack: contextlib.AsyncExitStack) -> CrisisDetector:
    """Patterns, the classifier (on the search's query vectors when the store embeds with e5, else on its own e5
    copy; on the second signal's USE vectors when the store has it, else on its own USE: each loaded here once, a
    ConfigError when USE cannot load), and the moderation service when one is set; `stack` closes its client."""
    embedder, second = store.index.embedder, store.index.second

    async def store_embed(texts: Sequence[str]) -> np.ndarray:
        return await store.index.embed(texts, "query")

    if second is None:
        local = await asyncio.to_thread(local_detector, embedder, store_embed)
    else:  # the message's USE vector, made once for the detector and for the document it is logged as
        local = await asyncio.to_thread(local_detector, embedder, store_embed, None, second.vectors,
                                        second.embedder.name)
    if not settings.moderation_url:
        return local
    moderation = ModerationDetector(
        ModerationConfig(settings.moderation_url, settings.moderation_kind, settings.moderation_model,
                         settings.moderation_api_key, settings.moderation_timeout),
        store.failures.add)
    stack.push_async_callback(moderation.aclose)
    log.info("crisis detection asks %s (%s) too", settings.moderation_url, settings.moderation_kind)
    return LayeredDetector((*local.layers, moderation))


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


def voice_backends(settings: Settings) -> tuple[OpenAITranscriber | None, OpenAISpeaker | None]:
    """The Transcriber and the Speaker the settings set up (a base URL or a key each); None for one that is not."""
    transcriber = speaker = None
    if not (settings.transcribe_base_url or settings.transcribe_api_key or settings.speech_base_url
            or settings.speech_api_key):
        return None, None  # no voice: openai's audio client is not imported
    from bot.voice.openai_audio import OpenAISpeaker, OpenAITranscriber

    if settings.transcribe_base_url or settings.transcribe_api_key:
        transcriber = OpenAITranscriber(settings.transcribe_model, settings.transcribe_base_url,
                                        settings.transcribe_api_key, timeout=settings.transcribe_timeout,
                                        language=settings.transcribe_language)
    if settings.speech_base_url or settings.speech_api_key:
        speaker = OpenAISpeaker(settings.speech_model, settings.speech_voice, settings.speech_base_url,
                                settings.speech_api_key, timeout=settings.speech_timeout)
    return transcriber, speaker


async def open_toolboxes(settings: Settings, store: MemoryStore, stack: contextlib.AsyncExitStack) -> list[ToolBox]:
    """The toolboxes the settings switch on (the web, MCP servers, suggestions); `stack` closes them at the end."""
    boxes: list[ToolBox] = []
    web = web_tools(settings)
    if web is not None:
        boxes.append(web)
        stack.push_async_callback(web.aclose)
    if settings.suggestions:
        limits = SuggestionLimits(settings.suggestions_per_user_per_day, settings.suggestions_per_day)
        boxes.append(SuggestionBox(limits))
    if servers := read_servers(settings.mcp_servers):  # a server that cannot be reached is logged and left out
        from bot.mcp.toolbox import open_toolbox

        boxes.append(await open_toolbox(servers, stack, settings.data_dir, erased=store.scopes_erased))
    return boxes


@contextlib.asynccontextmanager
async def running_engine(settings: Settings, metrics: Metrics = NO_METRICS) -> AsyncIterator[Engine]:
    """Open the store, the models and the toolboxes, yield the engine, and close everything in reverse."""
    embedder, second = await asyncio.to_thread(make_embedders, settings)
    store = await MemoryStore.open(settings.data_dir, embedder, semantic_dedupe=settings.dedupe_threshold,
                                      search_cache_bytes=settings.search_cache_mb * 2**20,
                                      database_url=settings.database_url, second=second, calibrate=True)
    chat, background = make_models(settings)
    store.reranking = make_reranking(settings, chat)
    budget = TokenBudget(store.usage, settings.background_tokens_per_day, settings.zone)
    stack = contextlib.AsyncExitStack()
    engine: Engine | None = None
    try:
        if (close := getattr(store.reranking and store.reranking.reranker, "aclose", None)) is not None:
            stack.push_async_callback(close)  # a reranking server's HTTP client (the store closes the embedder's)
        await move_old_files(store, settings.data_dir, time.time())  # an earlier version kept voice notes as files
        toolboxes = await open_toolboxes(settings, store, stack)  # a wrong MCP configuration stops here, closed
        transcriber, speaker = voice_backends(settings)
        for backend in (transcriber, speaker):
            if backend is not None:
                stack.push_async_callback(backend.aclose)
        counted_chat, counted_background = chat, background
        if metrics is not NO_METRICS:  # the models' calls, tokens and cache hits counted per purpose
            counted_chat, counted_background = CountedLLM(chat, metrics, "chat"), CountedLLM(background, metrics,
                                                                                             "background")
        detector = await open_crisis_detector(settings, store, stack)
        engine = Engine(store, counted_chat, MeteredLLM(counted_background, budget), engine_config(settings, detector),
                        budget=budget, toolboxes=toolboxes, transcriber=transcriber, speaker=speaker, metrics=metrics)
        yield engine
    finally:
        if engine is not None:
            await engine.drain()
            await engine.close()
        await stack.aclose()
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


def telegram_config(settings: Settings) -> TelegramConfig:
    """The Telegram channel's part of the settings."""
    if not settings.telegram_token:
        raise ConfigError("The telegram channel needs MNEMO_TELEGRAM_TOKEN (a bot token from @BotFather).")
    return TelegramConfig(
        token=settings.telegram_token, base_url=settings.telegram_base_url,
        allowed_users=frozenset(settings.telegram_allowed_users), admins=frozenset(settings.admins),
        unknown_users=settings.unknown_users_mode, pairing_minutes=settings.pairing_minutes,
        allowed_groups=frozenset(settings.telegram_allowed_groups), streaming=settings.streaming,
        webhook_url=settings.telegram_webhook_url, webhook_listen=settings.telegram_webhook_listen,
        webhook_port=settings.telegram_webhook_port, webhook_secret=settings.telegram_webhook_secret,
        worker=shared_worker(settings),
    )


def matrix_config(settings: Settings) -> MatrixConfig:
    """The Matrix channel's part of the settings (its session, sync token and keys live in data_dir/matrix)."""
    if not (settings.matrix_homeserver and settings.matrix_user_id):
        raise ConfigError("The matrix channel needs MNEMO_MATRIX_HOMESERVER and MNEMO_MATRIX_USER_ID.")
    if not (settings.matrix_password or settings.matrix_access_token):
        raise ConfigError("The matrix channel needs MNEMO_MATRIX_PASSWORD or MNEMO_MATRIX_ACCESS_TOKEN.")
    from bot.channels.matrix.config import MatrixConfig

    return MatrixConfig(
        homeserver=settings.matrix_homeserver, user_id=settings.matrix_user_id, password=settings.matrix_password,
        access_token=settings.matrix_access_token, allowed_users=frozenset(settings.matrix_allowed_users),
        data_dir=settings.data_dir / "matrix", device_name=settings.matrix_device_name,
        admins=frozenset(settings.admins), unknown_users=settings.unknown_users_mode,
        pairing_minutes=settings.pairing_minutes, allowed_rooms=frozenset(settings.matrix_allowed_rooms),
        streaming=settings.streaming, worker=shared_worker(settings), pickle_key=settings.matrix_pickle_key,
    )


def build_channels(settings: Settings, engine: Engine, commands: Commands) -> list[Messenger]:
    """The messengers to run, in start order (the terminal is not one of them)."""
    channels: list[Messenger] = []
    for name in settings.active_channels:
        if name == "telegram":
            channels.append(TelegramChannel(engine, commands, telegram_config(settings)))
        elif name == "matrix":
            from bot.channels.matrix.channel import MatrixChannel

            channels.append(MatrixChannel(engine, commands, matrix_config(settings)))
        elif name != "console":
            raise ConfigError(f"MNEMO_CHANNELS names an unknown channel {name!r} (use console, telegram, matrix).")
    return channels


async def until_stopped() -> None:
    """Wait for SIGINT or SIGTERM."""
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stopped.set)
    try:
        await stopped.wait()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def web_site(settings: Settings, commands: Commands) -> Site:
    """The private web page's site; from now on /web in the chat sends login links to it."""
    from bot.web_page.site import Site  # the web page's parts (starlette, jinja2) only with MNEMO_WEB_LISTEN

    base = base_url(settings.web_base_url, settings.web_listen)
    commands.web = WebLinks(commands.store, base)
    return Site(commands, frozenset(settings.admins), secure=base.startswith("https://"),
                session_days=settings.web_session_days)


async def start_web(settings: Settings, metrics: PrometheusMetrics, running: Running, commands: Commands,
                    stack: contextlib.AsyncExitStack) -> None:
    """Serve /metrics, /healthz and the private web page on MNEMO_WEB_LISTEN; `stack` stops the server."""
    from bot.settings import listen_address
    from bot.web_page.routes import web_app
    from bot.web_page.server import WebServer

    host, port = listen_address(settings.web_listen)
    site = web_site(settings, commands)
    server = WebServer(web_app(site, running, metrics, settings.metrics_token), host, port)
    await server.start()
    stack.push_async_callback(server.stop)


def worker_name(settings: Settings) -> str:
    """This process's name among the workers of one database (MNEMO_WORKER_NAME, else host and process id)."""
    return settings.worker_name or f"{socket.gethostname()}:{os.getpid()}"


def shared_worker(settings: Settings) -> str | None:
    """This worker's name when it may share the database with others (PostgreSQL); None on SQLite (one process)."""
    return worker_name(settings) if is_postgres(settings.database_url) else None


async def start_scheduler(scheduler: Scheduler, worker: str, stack: contextlib.AsyncExitStack) -> None:
    """Start the scheduler at once on SQLite (one process); on PostgreSQL whenever this worker holds the lease
    `scheduler` (several workers share the database, one runs the jobs). `stack` stops it."""
    if scheduler.store.db.dialect != "postgres":
        await scheduler.start()
        stack.push_async_callback(scheduler.stop)
        return
    leader = SchedulerLeader(scheduler, scheduler.store.leases, worker)
    stack.push_async_callback(stop_task, asyncio.create_task(leader.run(), name=f"scheduler lease of {worker}"))


async def turns_in_context(store: MemoryStore, pause: float = 0.5) -> None:
    """Re-embed the messages stored before they were read in context (m053), a batch at a time with a pause between,
    so turns go first; a failing embedder stops it until the next start (it goes on where it stopped)."""
    try:
        while True:
            done, finished = await store.messages.catch_up_context(max_batches=1)
            if finished:
                return
            log.info("re-embedded %d older messages in context; going on", done)
            await asyncio.sleep(pause)
    except MemoryStoreError:
        log.warning("re-embedding older messages in context stopped; it goes on at the next start", exc_info=True)


@contextlib.contextmanager
def settled_heap() -> Iterator[None]:
    """Run the block with everything the start made (modules, models, settings) moved out of the garbage collector's
    way (`gc.freeze`): a full collection walked all of it on the event loop's thread and held the loop 41 ms at 50
    people (bench/load.py, docs/benchmarks.md); now it walks what turns made since. Given back at the end."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def main(settings: Settings) -> None:
    """Run the configured channels until the terminal chat ends or the process is stopped."""
    from bot.channels.console import ConsoleChannel

    metrics = None
    if settings.web_listen:
        from bot.web_page.prometheus import PrometheusMetrics

        metrics = PrometheusMetrics()
    async with running_engine(settings, metrics or NO_METRICS) as engine:
        hint = await check_model(settings, engine.chat)
        if hint:
            print(hint, flush=True)
        commands = Commands(engine)
        messengers = build_channels(settings, engine, commands)
        run_console = "console" in settings.active_channels or not messengers
        console = ConsoleChannel(engine, commands=commands) if run_console else None
        routes: dict[str, Pushes] = {m.name: m for m in messengers}
        if console is not None:
            routes["console"] = console
        scheduler = Scheduler(engine.store, settings.companion_id, LLMWriter(engine.background), engine,
                              ChannelSender(routes), settings.zone, settings.data_dir, lang=settings.language,
                              budget=engine.budget,
                              weather=OpenMeteo(settings.weather_url) if settings.weather_url else None,
                              job_runs=metrics)
        commands.scheduler = scheduler
        engine.learning.notices.outbox = scheduler.outbox  # saved notices go out as the other pushes do
        live: dict[str, bool] = {}  # the channels as /healthz reports them
        async with contextlib.AsyncExitStack() as running:
            for messenger in messengers:
                await messenger.start()
                live[messenger.name] = True
                running.push_async_callback(messenger.stop)
                running.callback(live.__setitem__, messenger.name, False)
            await start_scheduler(scheduler, worker_name(settings), running)
            running.push_async_callback(stop_task, asyncio.create_task(turns_in_context(engine.store),
                                                                       name="older messages in context"))
            if console is not None:
                live["console"] = True
            if metrics is not None:
                crypto = next((m for m in messengers if isinstance(m, ReportsCrypto)), None)
                await start_web(settings, metrics, Running(engine.store, engine.budget, scheduler, live.copy, crypto,
                                                           shared_worker(settings)),
                                commands, running)
            with settled_heap():
                if console is not None:
                    await console.run()
                else:
                    await until_stopped()
