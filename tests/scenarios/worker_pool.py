"""Starting worker processes (tests/scenarios/worker_child.py) and posting webhooks to them as a load balancer
would: for the multi-worker test and bench/workers.py."""
from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import aiohttp

from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.worker_child import DELAY, SECRET

ROOT = Path(__file__).resolve().parents[2]


async def start_worker(tg: FakeTelegram, url: str, folder: Path, port: int, name: str, delay: float | None = None,
                       health_port: int | None = None, log: IO[bytes] | None = None) -> asyncio.subprocess.Process:
    """A worker on the database at url, listening on port (and serving /healthz on health_port); returns once it
    says it is ready. Its log goes to `log` (else to this process's stderr)."""
    extra = [] if delay is None else [str(delay)]
    if health_port is not None:
        extra = [extra[0] if extra else str(DELAY), str(health_port)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.scenarios.worker_child", url, str(folder), tg.base_url, str(port), name, *extra,
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=asyncio.subprocess.PIPE, stderr=log)
    assert proc.stdout is not None
    assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"ready"
    return proc


async def post(session: aiohttp.ClientSession, ports: list[int], first: int, update: object) -> None:
    """Post to the worker whose turn it is; one that does not answer is skipped, as a load balancer would."""
    for step in range(len(ports) * 3):
        port = ports[(first + step) % len(ports)]
        try:
            async with session.post(f"http://127.0.0.1:{port}/hook", json=update,
                                    headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            await asyncio.sleep(0.05)
    raise AssertionError(f"no worker took {update}")


async def post_to(session: aiohttp.ClientSession, port: int, update: object) -> int:
    """Post one update to one worker, as Telegram would; the HTTP status it answered."""
    async with session.post(f"http://127.0.0.1:{port}/hook", json=update,
                            headers={"X-Telegram-Bot-Api-Secret-Token": SECRET}) as response:
        return response.status


async def healthy(session: aiohttp.ClientSession, port: int) -> bool:
    """Whether the worker's /healthz answers 200 (a refused connection or a timeout: no)."""
    try:
        async with session.get(f"http://127.0.0.1:{port}/healthz", timeout=aiohttp.ClientTimeout(total=5)) as response:
            return response.status == 200
    except (aiohttp.ClientError, TimeoutError):
        return False


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [int(s.getsockname()[1]) for s in sockets]
    for s in sockets:
        s.close()
    return ports


async def post_round(tg: FakeTelegram, session: aiohttp.ClientSession, ports: list[int], people: Sequence[int],
                     round_: int) -> None:
    """Each person writes "Nachricht <round> von <person>"; the updates are posted to the workers in turn."""
    for user in people:
        tg.send_text(user, f"Nachricht {round_} von {user}")
    batch, tg.pending[:] = list(tg.pending), []
    await asyncio.gather(*(post(session, ports, n, update) for n, update in enumerate(batch)))
