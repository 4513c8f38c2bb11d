"""Throughput of several workers: messages answered per second by 1, 2 and 3 worker processes serving one Telegram
bot in webhook mode on one PostgreSQL database (the pgserver wheel's, started here), the fake Bot API's updates
spread over them as a load balancer would. The model is a fake that answers after a fixed delay (`--delay`), so
the figure is mnemo's own work around a model of that speed: storing, claiming, searching, prompting, learning.

Usage: .venv/bin/python bench/workers.py [--workers 1,2,3] [--users 50] [--rounds 4] [--delay 0.5]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import postgres_kit  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402
from tests.scenarios.worker_child import USERS  # noqa: E402
from tests.scenarios.worker_pool import free_ports, post_round, start_worker  # noqa: E402


async def run(workers: int, users: int, rounds: int, delay: float) -> tuple[int, float]:
    """Messages answered and the seconds from the first post until the last answer."""
    url = await postgres_kit.fresh_database()
    people = USERS[:users]
    with tempfile.TemporaryDirectory() as folder:
        async with FakeTelegram(token="123:ABC") as tg:
            ports = free_ports(workers)
            procs = [await start_worker(tg, url, Path(folder) / f"w{n}", port, f"w{n}", delay)
                     for n, port in enumerate(ports)]
            try:
                started = time.perf_counter()
                async with aiohttp.ClientSession() as session:
                    for round_ in range(rounds):
                        await post_round(tg, session, ports, people, round_)
                want = len(people) * rounds
                await tg.wait_until(lambda: len(tg.sent) >= want, timeout=600, what="every message answered")
                elapsed = time.perf_counter() - started
            finally:
                for proc in procs:
                    proc.send_signal(signal.SIGKILL)
                    await proc.wait()
    await asyncio.to_thread(postgres_kit.drop, url)
    return len(tg.sent), elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the fake model takes per answer")
    args = parser.parse_args()
    print(f"{args.users} people x {args.rounds} messages, model delay {args.delay} s, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")
    for n in (int(w) for w in args.workers.split(",")):
        answered, seconds = await run(n, args.users, args.rounds, args.delay)
        print(f"workers {n}: {answered} answered in {seconds:.1f} s = {answered / seconds:.1f} messages/s"
              f" (load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
