"""How long the workers take to come back after PostgreSQL restarts: three webhook workers
(tests/scenarios/worker_child.py) on one PostgreSQL (the pgserver wheel's, started here), the server restarted with
`pg_ctl restart -m fast` again and again; per restart the seconds until every worker's /healthz is 200 again, counted
from when the server accepts connections again (and from when the restart began), and whether every worker then
answers a message.

With `--down S` the server is stopped (`pg_ctl stop -m fast`), left down S seconds, and started again, as an
outage or a failover that takes a while does.

Usage: .venv/bin/python bench/pg_restarts.py [--restarts 10] [--workers 3] [--down 0]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.backends import PostgresServer  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402
from tests.scenarios.worker_child import USERS  # noqa: E402
from tests.scenarios.worker_pool import free_ports, healthy, post_to, start_worker  # noqa: E402

GOAL_P95 = 10.0


async def all_healthy(session: aiohttp.ClientSession, ports: list[int], give_up: float = 120.0) -> float:
    """Seconds until every worker's /healthz is 200, asked every 0.1 s (inf after give_up)."""
    started = time.monotonic()
    pending = set(ports)
    while pending:
        if time.monotonic() - started > give_up:
            return float("inf")
        answers = await asyncio.gather(*(healthy(session, p) for p in pending))
        pending = {p for p, ok in zip(list(pending), answers, strict=True) if not ok}
        if pending:
            await asyncio.sleep(0.1)
    return time.monotonic() - started


def quantile(values: list[float], q: float) -> float:
    """The q-quantile, nearest rank (p95 of 10 values is the largest but none)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


async def run(restarts: int, workers: int, down: float) -> None:
    server = PostgresServer()
    try:
        url = await asyncio.to_thread(server.fresh_url, "restarts")
        with tempfile.TemporaryDirectory() as folder:
            async with FakeTelegram(token="123:ABC") as tg, aiohttp.ClientSession() as session:
                hooks, health = free_ports(workers), free_ports(workers)
                procs = [await start_worker(tg, url, Path(folder) / f"w{n}", port, f"w{n}", health_port=health[n])
                         for n, port in enumerate(hooks)]
                try:
                    await all_healthy(session, health)
                    await measure(server, tg, session, hooks, health, restarts, down)
                finally:
                    for proc in procs:
                        proc.send_signal(signal.SIGKILL)
                        await proc.wait()
    finally:
        server.stop()


async def measure(server: PostgresServer, tg: FakeTelegram, session: aiohttp.ClientSession, hooks: list[int],
                  health: list[int], restarts: int, down: float) -> None:
    """Restart the server `restarts` times; print each restart's figures and the summary."""
    after_up: list[float] = []
    after_start: list[float] = []
    answered = asked = 0
    for n in range(restarts):
        began = time.monotonic()
        if down:
            await asyncio.to_thread(server.halt)
            await asyncio.sleep(down)
        await asyncio.to_thread(server.restart)
        up = time.monotonic()
        seconds = await all_healthy(session, health)
        after_up.append(seconds)
        after_start.append(seconds + up - began)
        sent_before = len(tg.sent)
        for k, port in enumerate(hooks):  # one message to each worker: does every one answer again?
            tg.send_text(USERS[k], f"Nach Neustart {n}")
            if await post_to(session, port, tg.pending.pop()) == 200:
                asked += 1
        want = sent_before + len(hooks)
        await tg.wait_until(lambda want=want: len(tg.sent) >= want, timeout=30, what="every worker's answer")
        answered += len(tg.sent) - sent_before
        print(f"restart {n + 1}: server down and up in {up - began:.2f} s; every /healthz 200 {seconds:.2f} s after"
              f" it was up ({after_start[-1]:.2f} s after the restart began)", flush=True)
    p50, p95 = statistics.median(after_up), quantile(after_up, 0.95)
    kind = f"stopped for {down:g} s and started" if down else "pg_ctl restart -m fast"
    print(f"\n{restarts} restarts ({kind}), {len(hooks)} workers, {os.cpu_count()} cores,"
          f" load {os.getloadavg()[0]:.1f}")
    print(f"every worker healthy again after the server was up: p50 {p50:.2f} s, p95 {p95:.2f} s,"
          f" max {max(after_up):.2f} s (goal p95 <= {GOAL_P95:g} s: {'met' if p95 <= GOAL_P95 else 'MISSED'})")
    print(f"counted from the restart's start: p50 {statistics.median(after_start):.2f} s,"
          f" p95 {quantile(after_start, 0.95):.2f} s, max {max(after_start):.2f} s")
    print(f"messages after a restart: {asked} taken (200), {answered} answered, of {restarts * len(hooks)}")
    print(f"workers running the scheduler afterwards: {await leaders(session, health)} (one expected)")


async def leaders(session: aiohttp.ClientSession, health: list[int], within: float = 20.0) -> int:
    """How many workers say their scheduler runs, once one does (the lease moves on within seconds)."""
    deadline = time.monotonic() + within
    while True:
        bodies = []
        for port in health:
            async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                bodies.append(await response.json())
        count = sum(1 for body in bodies if body.get("scheduler"))
        if count or time.monotonic() > deadline:
            return count
        await asyncio.sleep(0.5)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restarts", type=int, default=10)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--down", type=float, default=0.0, help="seconds the server stays stopped (0: pg_ctl restart)")
    args = parser.parse_args()
    await run(args.restarts, args.workers, args.down)


if __name__ == "__main__":
    asyncio.run(main())
