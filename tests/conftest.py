"""Shared fixtures: a real store in tmp_path with the deterministic embedder, an engine on scripted models, the fake
Bot API, the web page on the engine. A test module that needs another kind defines its own fixture of the same name."""
from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import json
import logging
import os
import shutil
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.conversation.engine import Engine, EngineConfig
from bot.logs import LineFormatter
from memory.search.embedder import Embedder, make_embedder
from memory.store import MemoryStore
from tests import postgres_kit
from tests.evaluation_data import MISSING
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM
from tests.fakes.openai_audio import FakeAudioAPI
from tests.fakes.synapse import Synapse
from tests.fakes.telegram_api import FakeTelegram
from tests.web_kit import WebPage, web_page


@pytest.fixture(autouse=True)
def _no_outside_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that tries to reach anything but 127.0.0.1."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            raise ConnectionRefusedError(f"test tried to reach {host}; only 127.0.0.1 is allowed")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _logging_left_as_found() -> Iterator[None]:
    """Undo what a test's run of mnemo's own logging setup (`bot.logs.install`, the CLI in-process) did to the
    process's loggers: its stderr handler and levels stayed for every later test of the worker, which then wrote
    every DEBUG record to a captured stderr (11 MB in one test's report, the xdist main process grew by 600 MB
    holding such reports, and the formatting cost time)."""
    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                      if isinstance(lg, logging.Logger))]
    levels = {lg: lg.level for lg in loggers}
    root = logging.getLogger()
    handlers = list(root.handlers)
    yield
    for handler in [h for h in root.handlers if h not in handlers or isinstance(h.formatter, LineFormatter)]:
        root.removeHandler(handler)
    for handler in [h for h in handlers if h not in root.handlers]:
        root.addHandler(handler)
    for lg, level in levels.items():
        lg.setLevel(level)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say loudly which tests did not run for want of the shared evaluation data (also from pytest-xdist's workers,
    whose skips reach this process as reports)."""
    reasons = [str(report.longrepr[2]) for report in terminalreporter.stats.get("skipped", [])
               if isinstance(report.longrepr, tuple) and MISSING in str(report.longrepr[2])]
    if reasons:
        terminalreporter.section("evaluation data missing: this run proves less than CI", red=True, bold=True)
        for reason in dict.fromkeys(reasons):
            terminalreporter.write_line(reason.removeprefix("Skipped: "))


# Modules handed out first (pytest-xdist gives whole modules to the workers in collection order): the one whose child
# process imports torch while the workers are still small, then the longest, so that no long module starts last
# while the other worker has nothing left (docs/testing.md: where the time goes).
FIRST = (
    "tests/test_embedder.py",  # torch in a child (about 340 MB), while the workers are small ...
    "tests/test_crash_safety.py",
    "tests/test_interleavings.py",  # one test of about 46 s: not the last one on a worker
    "tests/test_web_browser.py",  # ... and Chromium (about 450 MB) after it on the same worker, not beside it
    "tests/test_hostile.py",
    "tests/scenarios/test_workers_killed.py",
    "tests/test_matrix_polish.py",
    "tests/test_mcp_tools.py",
    "tests/scenarios/test_channels_crashes.py",
    "tests/test_isolation.py",
    "tests/scenarios/test_learning_catch_up.py",
    "tests/test_retrieval_own_set.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:  # make test: --no-loadscope-reorder
    """Put the modules of FIRST first, in its order; the rest keep theirs."""
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(FIRST)))  # stable: ties keep their order


def _trim() -> None:
    """Hand the heap's free memory back to the system (glibc keeps it otherwise: a worker only grows)."""
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to do
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a module's last test: collect its garbage and trim the heap, so that the memory a module used (a corpus,
    a model's buffers) is not carried through the rest of the run."""
    if nextitem is None or nextitem.module is not item.module:  # type: ignore[attr-defined]
        gc.collect()
        _trim()


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    """The bundled embedding model, loaded once per test process."""
    return make_embedder()


def backends_for(markers: dict[str, pytest.Mark | None]) -> list[str]:
    """The backends a test of a store runs on: both where its module is marked `both_backends`, else SQLite.

    `sqlite_only` on a test of such a module keeps it on SQLite; MNEMO_TEST_BACKENDS=both runs every store test on
    both (the slow full check).
    """
    if markers.get("sqlite_only") is not None:
        return ["sqlite"]
    if markers.get("both_backends") is not None or os.environ.get("MNEMO_TEST_BACKENDS") == "both":
        return ["sqlite", "postgres"]
    return ["sqlite"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize `database_url` with the test's backends (see `backends_for`)."""
    if "database_url" not in metafunc.fixturenames:
        return
    node = metafunc.definition
    markers = {name: node.get_closest_marker(name) for name in ("sqlite_only", "both_backends")}
    metafunc.parametrize("database_url", backends_for(markers), indirect=True)


@pytest.fixture
async def database_url(request: pytest.FixtureRequest) -> AsyncIterator[str | None]:
    """None for the SQLite file, or the URL of a fresh PostgreSQL database (copied from a migrated template)."""
    if request.param == "sqlite":
        yield None
        return
    url = await postgres_kit.fresh_database()
    yield url
    await asyncio.to_thread(postgres_kit.drop, url)


class SqliteTemplates:
    """Migrated, empty SQLite files, one per embedding model, made once per test process by `MemoryStore.open`
    itself; a test's store starts as a copy (the SQLite side of PostgreSQL's template databases). Forty-odd
    migrations per test cost a tenth of a second each time; the migrations' own tests open empty files."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.made: dict[tuple[str, int], Path] = {}

    async def copy_to(self, path: Path, embedder: Embedder) -> None:
        """Put a migrated empty database for this embedder at path."""
        key = (embedder.name, embedder.dim)
        if key not in self.made:
            template = self.folder / f"template-{len(self.made)}" / "mnemo.sqlite3"
            template.parent.mkdir()
            await (await MemoryStore.open(template, embedder)).close()  # the close checkpoints: one file, no WAL
            self.made[key] = template
        shutil.copy2(self.made[key], path)


@pytest.fixture(scope="session")
def sqlite_templates(tmp_path_factory: pytest.TempPathFactory) -> SqliteTemplates:
    return SqliteTemplates(tmp_path_factory.mktemp("sqlite-templates"))


@pytest.fixture
async def store(tmp_path, embedder, database_url, sqlite_templates) -> AsyncIterator[MemoryStore]:  # type: ignore[no-untyped-def]
    if database_url is None:
        await sqlite_templates.copy_to(tmp_path / "mnemo.sqlite3", embedder)
    s = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, semantic_dedupe=0.97, database_url=database_url)
    yield s
    await s.close()


@pytest.fixture
async def second_store(tmp_path, embedder, database_url, store) -> AsyncIterator[MemoryStore]:  # type: ignore[no-untyped-def]
    """A second worker's store: its own connection to the `store`'s database."""
    s = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, semantic_dedupe=0.97, database_url=database_url)
    yield s
    await s.close()


@pytest.fixture
def chat() -> ScriptedLLM:
    """The chat model: answers what a test enqueues."""
    return ScriptedLLM("chat")


@pytest.fixture
def background() -> ScriptedLLM:
    """The background model: finds nothing to learn unless a test says otherwise."""
    llm = ScriptedLLM("background")
    llm.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    return llm


@pytest.fixture
async def engine(store: MemoryStore, chat: ScriptedLLM, background: ScriptedLLM) -> AsyncIterator[Engine]:
    """The engine on the scripted models, every memory found (floor 0); its learning finished before it closes."""
    e = Engine(store, chat, background, EngineConfig(relevance_floor=0.0))
    yield e
    await e.drain()
    await e.close()


@pytest.fixture
async def audio() -> AsyncIterator[FakeAudioAPI]:
    """The fake OpenAI-compatible speech API (transcription and speech)."""
    async with FakeAudioAPI() as api:
        yield api


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    """The fake Bot API; torn down last, it checks that no task (of PTB, the channel, the engine) is left."""
    async with FakeTelegram(token="123:ABC") as fake:
        yield fake
    await asyncio.sleep(0)
    left = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    assert not left, left


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def synapse(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Synapse]:
    """One real Synapse for the test process; each test registers its users under names of its own
    (`Synapse.fresh_name`), so tests never meet on it."""
    async with Synapse(tmp_path_factory.mktemp("synapse")) as server:
        yield server



@pytest.fixture
def web_admins() -> frozenset[str]:
    """mnemo's admins on the `web` page: nobody (a module whose tests need one overrides this fixture)."""
    return frozenset()


@pytest.fixture
def web_clock() -> Callable[[], float]:
    """The clock of the `web` page's login links and sessions: the real one (a module may override it)."""
    return time.time


@pytest.fixture
async def web(engine: Engine, web_admins: frozenset[str], web_clock: Callable[[], float]) -> AsyncIterator[WebPage]:
    """The web page on the `engine` (tests/web_kit.py), with `web_admins` and `web_clock`; its browsers closed after."""
    async for page in web_page(engine, web_admins, web_clock):
        yield page
