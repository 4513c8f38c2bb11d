"""/metrics and /healthz: the real server on 127.0.0.1, parsed with Prometheus's own parser, counters moving as
messages flow through the engine, the terminal and the Telegram channel; who may read them."""
from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import re
import signal
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from bot.app import main
from bot.channels.console import ConsoleChannel
from bot.conversation.engine import Engine, EngineConfig
from bot.errors import LLMUnavailable
from bot.llm.metering import CountedLLM, MeteredLLM
from bot.llm.port import Completion, Usage
from bot.llm.writer import LLMWriter
from bot.settings import Settings, listen_address
from bot.web_page.app import make_app
from bot.web_page.health import Running
from bot.web_page.operator_access import has_token, is_local, operator_may
from bot.web_page.prometheus import PrometheusMetrics
from bot.web_page.server import WebServer
from memory.models import Scope
from memory.search.admission import Thresholds
from memory.store import MemoryStore
from scheduler.budget import TokenBudget
from scheduler.service import Scheduler
from tests.fakes.llm import ScriptedLLM
from tests.fakes.llm_api import FakeLLM
from tests.fakes.telegram_api import FakeTelegram
from tests.test_telegram import exchange, make_channel

BERLIN = ZoneInfo("Europe/Berlin")
TOKEN = "s3cret-operator-token"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus text page by (name, sorted labels)."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(page: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    """One sample's value; 0 when the series does not exist yet."""
    return page.get((name, tuple(sorted(labels.items()))), 0.0)


@dataclass
class Box:
    """The engine counted into `metrics`, the server on a free port, a client for it."""

    engine: Engine
    metrics: PrometheusMetrics
    server: WebServer
    http: httpx.AsyncClient
    chat: ScriptedLLM
    background: ScriptedLLM

    async def scrape(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        response = await self.http.get("/metrics")
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        return samples(response.text)


def learning_model() -> ScriptedLLM:
    """A background model that finds one fact in every batch (its source: the first user message it sees)."""
    llm = ScriptedLLM("background")

    def respond(call):  # type: ignore[no-untyped-def]
        ids = [int(i) for i in re.findall(r"^\[(\d+)\] user:", call.prompt, re.M)]
        return json.dumps({"facts": [{"text": "Anna spielt seit zehn Jahren Cello im Stadtorchester.",
                                      "importance": 7, "source_ids": ids[:1]}], "content": [], "profile": []})
    llm.responder = respond
    return llm


@pytest.fixture
async def box(store: MemoryStore, tmp_path: Path) -> AsyncIterator[Box]:
    metrics = PrometheusMetrics()
    chat, background = ScriptedLLM("chat"), learning_model()
    budget = TokenBudget(store.usage, 100_000, BERLIN)
    engine = Engine(store, CountedLLM(chat, metrics, "chat"),
                    MeteredLLM(CountedLLM(background, metrics, "background"), budget),
                    EngineConfig(relevance_floor=0.0, zone=BERLIN, admission=Thresholds()), budget=budget,
                    metrics=metrics)
    server = WebServer(make_app(Running(store, budget, None, lambda: {"console": True}), metrics, TOKEN),
                       "127.0.0.1", 0)
    await server.start()
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=5) as http:
        yield Box(engine, metrics, server, http, chat, background)
    await server.stop()
    await engine.drain()
    await engine.close()


async def chat_lines(engine: Engine, *lines: str) -> str:
    out = io.StringIO()
    await ConsoleChannel(engine, stdin=io.StringIO("".join(line + "\n" for line in lines)), stdout=out).run()
    await engine.drain()
    return out.getvalue()


async def test_counters_move_as_messages_flow_through_the_engine(box: Box) -> None:
    before = await box.scrape()
    assert value(before, "mnemo_messages_in_total", channel="console") == 0
    assert value(before, "mnemo_database_up") == 1

    box.chat.queue.append(Completion("Schön!", (), Usage(100, 20, cache_read_tokens=80), "chat"))
    box.chat.enqueue("Gern.")
    out = await chat_lines(box.engine, "Ich spiele Cello im Stadtorchester", "Und du?")
    assert "Schön!" in out and "Gern." in out

    page = await box.scrape()
    assert value(page, "mnemo_messages_in_total", channel="console") == 2
    assert value(page, "mnemo_messages_out_total", channel="console") == 2
    assert value(page, "mnemo_reply_seconds_count", channel="console") == 2
    assert value(page, "mnemo_reply_seconds_bucket", channel="console", le="+Inf") == 2
    assert value(page, "mnemo_model_calls_total", purpose="chat", outcome="ok") == 2
    assert value(page, "mnemo_model_tokens_total", purpose="chat", direction="input") == 110
    assert value(page, "mnemo_model_tokens_total", purpose="chat", direction="output") == 30
    assert value(page, "mnemo_model_cache_hits_total", purpose="chat") == 1
    assert value(page, "mnemo_model_cache_read_tokens_total", purpose="chat") == 80
    # learning after the replies: the background model's calls, the budget spent today, the note admitted
    background_calls = len(box.background.calls)
    assert background_calls >= 1
    assert value(page, "mnemo_model_calls_total", purpose="background", outcome="ok") == background_calls
    assert value(page, "mnemo_background_tokens_today") == 20 * background_calls  # ScriptedLLM: 10 in, 10 out
    assert value(page, "mnemo_background_tokens_cap") == 100_000
    assert value(page, "mnemo_extraction_notes_total", outcome="admitted") == 1
    assert value(page, "mnemo_extraction_notes_total", outcome="dropped") == background_calls - 1


async def test_no_user_id_and_no_text_reaches_the_page_even_in_a_crisis(box: Box) -> None:
    box.chat.enqueue("Ich bin da.")
    await chat_lines(box.engine, "Ich will nicht mehr leben, Cello hilft nicht")
    page = (await box.http.get("/metrics")).text
    assert value(samples(page), "mnemo_messages_out_total", channel="console") == 1
    assert "Cello" not in page and "leben" not in page
    scope_users = {s.user_id for s in await box.engine.store.scopes("mnemo")}
    assert scope_users and not any(user in page for user in scope_users)


async def test_garbage_from_the_background_model_shows_as_a_failure(box: Box) -> None:
    box.background.responder = lambda call: "das ist kein JSON"
    await chat_lines(box.engine, "Ich spiele Cello")
    page = await box.scrape()
    assert value(page, "mnemo_failures_total", kind="extraction.bad_json") >= 1
    assert value(page, "mnemo_extraction_notes_total", outcome="admitted") == 0


async def test_a_failing_model_is_counted_as_an_error(box: Box) -> None:
    box.chat.enqueue_error(LLMUnavailable("down"))
    out = await chat_lines(box.engine, "Hallo?")
    assert out  # the person got the short honest error
    page = await box.scrape()
    assert value(page, "mnemo_model_calls_total", purpose="chat", outcome="failed") == 1
    assert value(page, "mnemo_errors_total", kind="model.chat") == 1
    assert value(page, "mnemo_messages_in_total", channel="console") == 1


async def test_the_outbox_is_read_at_scrape_time(box: Box, store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    sent = await store.outbox.record(scope, "checkin", "Na?")
    await store.outbox.mark_sent(sent.id, 1.0)
    failed = await store.outbox.record(scope, "reminder", "Zahnarzt")
    await store.outbox.mark_failed(failed.id, "blocked", None)
    await store.outbox.record(scope, "diary", "Heute …")
    page = await box.scrape()
    assert [value(page, "mnemo_outbox_items", status=s) for s in ("pending", "sent", "failed", "dropped")] == [
        1, 1, 1, 0]
    await store.failures.add("extraction.bad_json")
    assert value(await box.scrape(), "mnemo_failures_total", kind="extraction.bad_json") == 1


class Deliveries:
    async def deliver(self, scope: Scope, text: str, *, buttons: object = ()) -> bool:
        return True


async def test_scheduler_job_runs_are_counted_by_job_and_outcome(box: Box, store: MemoryStore,
                                                                tmp_path: Path) -> None:
    scheduler = Scheduler(store, "mnemo", LLMWriter(box.background), box.engine, Deliveries(), BERLIN, tmp_path,
                          job_runs=box.metrics)
    await scheduler.run("planner", 0, 1_800_000_000.0)
    await scheduler.run("diary", 999, 1_800_000_000.0)  # no such user
    page = await box.scrape()
    assert value(page, "mnemo_scheduler_job_runs_total", job="planner", outcome="ok") == 1
    assert value(page, "mnemo_scheduler_job_runs_total", job="diary", outcome="skipped") == 1


async def test_healthz_says_200_then_503_when_the_database_is_closed(box: Box, store: MemoryStore) -> None:
    ok = await box.http.get("/healthz")
    assert ok.status_code == 200
    assert ok.json() == {"status": "ok", "database": True, "scheduler": False, "channels": {"console": True}}
    await box.engine.drain()
    await store.close()
    down = await box.http.get("/healthz")
    assert down.status_code == 503
    assert down.json()["database"] is False
    page = await box.scrape()  # the process's own counters still, the store's numbers at zero
    assert value(page, "mnemo_database_up") == 0


async def test_only_this_machine_or_the_token_may_read(box: Box, store: MemoryStore) -> None:
    app = box.server.app

    async def get(path: str, client: tuple[str, int], **headers: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://mnemo.example") as http:
            return await http.get(path, headers=headers)

    outside = ("203.0.113.7", 40000)
    for path in ("/metrics", "/healthz"):
        assert (await get(path, outside)).status_code == 403
        assert (await get(path, outside, authorization="Bearer wrong")).status_code == 403
        assert (await get(path, outside, authorization=f"Basic {TOKEN}")).status_code == 403
        assert (await get(path, outside, authorization=f"Bearer {TOKEN}")).status_code == 200
        # a proxy on this machine: its X-Forwarded-For is not believed, its presence means the token is needed
        assert (await get(path, ("127.0.0.1", 5000), **{"x-forwarded-for": "127.0.0.1"})).status_code == 403
        assert (await get(path, ("::1", 5000))).status_code == 200
    # over the real socket: from 127.0.0.1 without a token; a forged header changes nothing for the better
    assert (await box.http.get("/metrics")).status_code == 200
    assert (await box.http.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"})).status_code == 403
    assert (await box.http.get("/nothing")).status_code == 404


def test_who_may_read_is_decided_by_address_headers_and_token() -> None:
    assert is_local("127.0.0.1", {}) and is_local("::1", {}) and is_local("127.8.0.1", {})
    assert is_local("::ffff:127.0.0.1", {})
    assert not is_local("10.0.0.1", {}) and not is_local(None, {}) and not is_local("testclient", {})
    assert not is_local("127.0.0.1", {"forwarded": "for=127.0.0.1"})
    assert has_token("Bearer abc", "abc") and has_token("bearer abc", "abc")
    assert not has_token("Bearer abc", None) and not has_token("Bearer ", "") and not has_token(None, "abc")
    assert not has_token("Bearer abcd", "abc")
    assert operator_may("192.0.2.1", {"authorization": "Bearer abc"}, "abc")
    assert not operator_may("192.0.2.1", {}, "abc")


def test_the_listen_address_is_checked_at_start() -> None:
    assert listen_address("127.0.0.1:8377") == ("127.0.0.1", 8377)
    assert listen_address("[::1]:9000") == ("::1", 9000)
    for bad in ("8377", "localhost", ":80", "127.0.0.1:http", "127.0.0.1:70000"):
        with pytest.raises(ValueError):
            listen_address(bad)
    with pytest.raises(ValidationError, match="host:port"):
        Settings(_env_file=None, web_listen="127.0.0.1")  # type: ignore[call-arg]
    assert Settings(_env_file=None).web_listen == ""  # type: ignore[call-arg]


async def test_counters_move_through_the_telegram_channel(tg: FakeTelegram, store: MemoryStore,
                                                          background: ScriptedLLM) -> None:
    metrics = PrometheusMetrics()
    chat = ScriptedLLM("chat")
    engine = Engine(store, CountedLLM(chat, metrics, "chat"), background, EngineConfig(relevance_floor=0.0),
                    metrics=metrics)
    channel = make_channel(tg, engine)
    await channel.start()
    server = WebServer(make_app(Running(store), metrics, None), "127.0.0.1", 0)
    await server.start()
    try:
        chat.enqueue("Hallo Anna!")
        sent = await exchange(tg, "Hallo")
        assert sent[0]["text"] == "Hallo Anna!"
        await exchange(tg, "/help")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
            page = samples((await http.get("/metrics")).text)
    finally:
        await server.stop()
        await channel.stop()
        await engine.drain()
        await engine.close()
    assert value(page, "mnemo_messages_in_total", channel="telegram") == 2
    assert value(page, "mnemo_messages_out_total", channel="telegram") == 2
    assert value(page, "mnemo_model_calls_total", purpose="chat", outcome="ok") == 1
    assert value(page, "mnemo_reply_seconds_count", channel="telegram") == 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


async def _run_main(settings: Settings, port: int, check) -> None:  # type: ignore[no-untyped-def]
    """Run mnemo's `main` until `check` is done, then stop it with SIGINT as the operator would."""
    running = asyncio.create_task(main(settings))
    try:
        await check(running)
    finally:
        if not running.done():  # a main that stopped on its own has no handler left for the signal
            os.kill(os.getpid(), signal.SIGINT)
        await asyncio.wait_for(running, 20)


async def test_main_serves_metrics_when_set_and_listens_nowhere_when_not(tmp_path: Path, tg: FakeTelegram) -> None:
    port = _free_port()
    async with FakeLLM(models=("fake-model",)) as llm:
        base = dict(_env_file=None, chat_base_url=llm.openai_base_url, chat_model="fake-model", chat_api_key="k",
                    llm_timeout=5, channels=["telegram"], telegram_token=tg.token, telegram_base_url=tg.base_url,
                    telegram_allowed_users=["42"], streaming=False)

        async def served(task: asyncio.Task[None]) -> None:
            for _ in range(1200):  # the embedder loads first
                if _listening(port) or task.done():
                    break
                await asyncio.sleep(0.05)
            assert not task.done(), task
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
                health = await http.get("/healthz")
                assert health.status_code == 200
                assert health.json()["channels"] == {"telegram": True} and health.json()["scheduler"] is True
                assert gc.get_freeze_count() > 0, "the start's objects are out of the collector's way while it runs"
                await exchange(tg, "Hallo")
                page = samples((await http.get("/metrics")).text)
            assert value(page, "mnemo_messages_in_total", channel="telegram") == 1
            assert value(page, "mnemo_model_calls_total", purpose="chat", outcome="ok") >= 1
            assert value(page, "mnemo_model_tokens_total", purpose="chat", direction="input") > 0

        await _run_main(Settings(**base, data_dir=tmp_path / "on", web_listen=f"127.0.0.1:{port}"), port, served)
        assert not _listening(port)  # stopped with the app
        assert gc.get_freeze_count() == 0  # and the heap given back

        async def silent(task: asyncio.Task[None]) -> None:
            before = len(tg.sent)
            tg.send_text(42, "Hallo")
            await tg.wait_for_sent(before + 1, timeout=60)  # mnemo is up and answering
            assert not _listening(port)

        await _run_main(Settings(**base, data_dir=tmp_path / "off"), port, silent)
