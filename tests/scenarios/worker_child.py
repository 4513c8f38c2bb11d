"""One of several workers in a child process, run until the test kills it: Telegram in webhook mode under a worker name,
the scheduler behind its lease, the memory in one PostgreSQL database shared with the other workers.

    python -m tests.scenarios.worker_child DATABASE_URL DATA_DIR BASE_URL PORT NAME [MODEL_DELAY_SECONDS [HEALTH_PORT]]

The model answers "Antwort auf <the message>" after a fixed delay. Claims, the scheduler's lease and the planner's
slots are short here (seconds), so a killed worker's chats, pushes and jobs move on within the test. Every job the
worker's scheduler runs is written to DATA_DIR/job_runs.log as "<job> <outcome>" (the metrics' port). The child prints
"ready" once it listens. With a HEALTH_PORT it serves the operator's /healthz there (bot/web_page).
"""
from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.channels.push import ChannelSender
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from bot.llm.port import Completion, CompletionRequest, Usage
from bot.web_page.app import make_app
from bot.web_page.health import Running
from bot.web_page.prometheus import PrometheusMetrics
from bot.web_page.server import WebServer
from memory.store import MemoryStore
from scheduler.leader import SchedulerLeader
from scheduler.service import Scheduler
from tests.fakes.embedder import FakeEmbedder
from tests.scenarios.telegram_child import writer_answer

USERS = tuple(range(1001, 1051))
DELAY = 0.02  # the model's answer takes this long
CLAIM_SECONDS = 4.0
LEASE_SECONDS, RENEW_SECONDS = 3.0, 1.0
# A push can wait seconds behind fifty answers here (5 s measured): a claim as short as a chat's let the next leader
# send a reminder again while the first was still on its way.
OUTBOX_CLAIM_SECONDS = 20.0
PLANNER_SECONDS = 10.0  # a few planner slots in the run; one longer than the lease takes to move on
SECRET = "s3cret"
JOB_LOG = "job_runs.log"


class Echo:
    """A chat and background model: answers the last line of the conversation after `delay`, or finds nothing to
    learn."""

    model = "echo"

    def __init__(self, delay: float = DELAY) -> None:
        self.delay = delay

    async def complete(self, request: CompletionRequest) -> Completion:
        messages = request.messages
        if request.json_schema is not None:
            return Completion('{"facts": [], "content": [], "profile": []}', (), Usage(1, 1), self.model)
        await asyncio.sleep(self.delay)
        return Completion("Antwort auf " + messages[-1].content.strip().splitlines()[-1], (), Usage(1, 1), self.model)


class JobLog:
    """The metrics' port: each job run as a line of the worker's log, written at once (the worker may be killed)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def job_ran(self, job: str, outcome: str) -> None:
        with self.path.open("a") as log:
            log.write(f"{job} {outcome}\n")


async def main(url: str, data_dir: str, base_url: str, port: str, name: str, delay: str = str(DELAY),
               health_port: str = "") -> None:
    store = await MemoryStore.open(Path(data_dir), FakeEmbedder(), semantic_dedupe=0.97, database_url=url)
    model = Echo(float(delay))
    engine = Engine(store, model, model, EngineConfig(relevance_floor=0.0))  # type: ignore[arg-type]
    commands = Commands(engine)
    config = TelegramConfig(token="123:ABC", base_url=base_url, allowed_users=frozenset(str(u) for u in USERS),
                            streaming=False, webhook_url=f"http://127.0.0.1:{port}/hook", webhook_port=int(port),
                            webhook_secret=SECRET, worker=name, claim_seconds=CLAIM_SECONDS)
    channel = TelegramChannel(engine, commands, config)
    scheduler = Scheduler(store, "mnemo", writer_answer, engine, ChannelSender({"telegram": channel}),
                          ZoneInfo("Europe/Berlin"), Path(data_dir), job_runs=JobLog(Path(data_dir) / JOB_LOG),
                          planner_every=timedelta(seconds=PLANNER_SECONDS))
    commands.scheduler = scheduler
    scheduler.outbox.claim_seconds = OUTBOX_CLAIM_SECONDS  # a killed worker's unsent push moves on in the test
    await channel.start()
    leader = SchedulerLeader(scheduler, store.leases, name, hold=LEASE_SECONDS, every=RENEW_SECONDS)
    task = asyncio.create_task(leader.run())
    if health_port:
        running = Running(store, scheduler=scheduler, channels=lambda: {"telegram": channel.app.running})
        await WebServer(make_app(running, PrometheusMetrics(), None), "127.0.0.1", int(health_port)).start()
    print("ready", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:8]))
