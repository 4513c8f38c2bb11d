"""What the chaos bench (bench/chaos.py) acts on: Telegram's side of a webhook behind a load balancer, the
PostgreSQL server it restarts and pauses, the workers it kills, and the search for an erased person's words.
"""
from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.backends import PostgresServer
from tests.fakes.telegram_api import FakeTelegram
from tests.scenarios.worker_child import SECRET
from tests.scenarios.worker_pool import start_worker

RETRY_FIRST, RETRY_MOST = 1.0, 8.0  # Telegram retries a failed webhook later, each time waiting longer


@dataclass
class Webhook:
    """Telegram posting updates to a load balancer in front of the workers: the balancer skips a worker that does not
    answer (refused, or no answer within `timeout`); an update no worker took with a 200 is posted again later, as
    Telegram retries a failed webhook, until one does."""

    session: aiohttp.ClientSession
    ports: list[int]
    timeout: float
    retries: int = 0  # updates posted again (Telegram's retries)
    skipped: int = 0  # workers the balancer passed over
    statuses: dict[int, int] = field(default_factory=dict)  # non-200 statuses seen, by status
    _turn: int = 0
    _open: set[asyncio.Task[None]] = field(default_factory=set)

    def send(self, update: dict[str, Any]) -> None:
        """Deliver an update in the background (retried until a worker takes it)."""
        task = asyncio.create_task(self._deliver(update), name=str(_chat(update)))
        self._open.add(task)
        task.add_done_callback(self._open.discard)

    def pending(self) -> int:
        """The updates not taken yet."""
        return len(self._open)

    def open_for(self, chat: int) -> int:
        """The updates of a chat not taken yet."""
        return sum(1 for task in self._open if task.get_name() == str(chat))

    async def stop(self) -> None:
        """Give up the updates not taken yet."""
        for task in list(self._open):
            task.cancel()
        await asyncio.gather(*self._open, return_exceptions=True)

    async def _deliver(self, update: dict[str, Any]) -> None:
        wait = RETRY_FIRST
        while not await self._post_once(update):
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_MOST)
            self.retries += 1

    async def _post_once(self, update: dict[str, Any]) -> bool:
        """One delivery through the balancer: True when a worker answered 200."""
        self._turn += 1
        first = self._turn
        for step in range(len(self.ports)):
            port = self.ports[(first + step) % len(self.ports)]
            try:
                async with self.session.post(f"http://127.0.0.1:{port}/hook", json=update,
                                             headers={"X-Telegram-Bot-Api-Secret-Token": SECRET},
                                             timeout=aiohttp.ClientTimeout(total=self.timeout)) as response:
                    if response.status == 200:
                        return True
                    self.statuses[response.status] = self.statuses.get(response.status, 0) + 1
                    return False  # the worker answered: the balancer passes its answer on, Telegram retries later
            except (TimeoutError, aiohttp.ClientError):
                self.skipped += 1
        return False


def _chat(update: dict[str, Any]) -> int:
    message = update.get("message") or update.get("callback_query", {}).get("message") or {}
    return int(message.get("chat", {}).get("id", 0))


class Workers:
    """The worker processes, each on its own webhook and health port and data folder, started again after a kill."""

    def __init__(self, tg: FakeTelegram, url: str, folder: Path, ports: list[int], health_ports: list[int],
                 delay: float) -> None:
        self.tg, self.url, self.folder, self.delay = tg, url, folder, delay
        self.ports, self.health_ports = ports, health_ports
        self.procs: list[asyncio.subprocess.Process | None] = [None] * len(ports)

    def name(self, n: int) -> str:
        return f"w{n}"

    async def start(self, n: int) -> None:
        with (self.folder / f"{self.name(n)}.log").open("ab") as log:  # searched for erased words too
            self.procs[n] = await start_worker(self.tg, self.url, self.folder / self.name(n), self.ports[n],
                                               self.name(n), self.delay, self.health_ports[n], log)

    async def kill(self, n: int) -> None:
        """SIGKILL worker n (and wait until it is gone)."""
        proc = self.procs[n]
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        self.procs[n] = None

    async def stop_all(self) -> None:
        for n in range(len(self.procs)):
            await self.kill(n)

    async def healthy(self, session: aiohttp.ClientSession, n: int) -> bool:
        """Whether worker n's /healthz answers 200 within two seconds."""
        try:
            async with session.get(f"http://127.0.0.1:{self.health_ports[n]}/healthz",
                                   timeout=aiohttp.ClientTimeout(total=2)) as response:
                return response.status == 200
        except (TimeoutError, aiohttp.ClientError):
            return False

    async def seconds_until_healthy(self, session: aiohttp.ClientSession, since: float, cap: float
                                    ) -> list[float | None]:
        """Per worker, the seconds from `since` (time.monotonic) until its /healthz said 200; None: not within cap."""
        found: list[float | None] = [None] * len(self.ports)
        while time.monotonic() - since < cap and None in found:
            waiting = [n for n in range(len(found)) if found[n] is None]
            for n, ok in zip(waiting, await asyncio.gather(*(self.healthy(session, n) for n in waiting))):
                if ok:
                    found[n] = time.monotonic() - since
            await asyncio.sleep(0.2)
        return found


class Server:
    """The pgserver PostgreSQL the workers share, restarted and paused as an operator's or a cloud's would be."""

    def __init__(self) -> None:
        self.pg = PostgresServer()
        self._inner: Any = self.pg._server  # pgserver's own object: its data folder

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: open connections are ended, the server is up again when it returns."""
        self.pg.restart()

    def processes(self) -> list[int]:
        """The postmaster and its children (from postmaster.pid and /proc)."""
        postmaster = int((Path(self._inner.pgdata) / "postmaster.pid").read_text().split()[0])
        children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(p) == postmaster]
        return [postmaster, *children]

    async def pause(self, seconds: float) -> None:
        """SIGSTOP the server's processes for `seconds`, then SIGCONT (a frozen VM, a storage stall)."""
        stopped = self.processes()
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(seconds)
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)

    def database(self, name: str) -> str:
        """A new empty database's URL (the workers' migrations fill it)."""
        return self.pg.fresh_url(name)

    def stop(self) -> None:
        self.pg.stop()


def _parent(proc: Path) -> int:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def leader(url: str) -> str | None:
    """The worker holding the scheduler's lease now (read on a connection of its own)."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        row = conn.execute("SELECT holder FROM leases WHERE name = 'scheduler' AND until > extract(epoch FROM now())"
                           ).fetchone()
    return str(row[0]) if row else None


def outbox_rows(url: str, text: str, since: float) -> list[str]:
    """The outbox rows of a pushed text, one line each (times in seconds after `since`): a push seen twice shows which
    worker held it until when, how often it was tried and with what error."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
        rows = conn.execute("SELECT id, status, attempts, claimed_by, claimed_until, sent_at, last_error FROM outbox"
                            " WHERE lower(text) LIKE %s ORDER BY id", (text.lower() + "%",)).fetchall()

    def at(value: float | None) -> str:
        return "-" if value is None else f"{value - since:.1f} s"

    return [f"#{i} {status}, {tries} tries, claimed by {holder or '-'} until {at(until)}, sent {at(sent)}"
            + (f", last error {error}" if error else "") for i, status, tries, holder, until, sent, error in rows]


def rows_holding(url: str, words: Iterable[str]) -> dict[str, int]:
    """Per word, the rows of every table of the database whose text holds it."""
    import psycopg

    found: dict[str, int] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid ="
                                             " c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN"
                                             " ('r', 'p')").fetchall()]
        for word in words:
            found[word] = 0
            for table in tables:
                row = conn.execute(f'SELECT count(*) FROM "{table}" t WHERE strpos(lower(t::text), %s) > 0',
                                   (word.lower(),)).fetchone()
                found[word] += int(row[0]) if row else 0
    return found


def files_holding(folder: Path, words: Iterable[str]) -> dict[str, list[str]]:
    """Per word, the files below folder whose bytes hold it."""
    wanted = {w: w.lower().encode() for w in words}
    found: dict[str, list[str]] = {w: [] for w in wanted}
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            for word, needle in wanted.items():
                if needle in data:
                    found[word].append(str(path.relative_to(folder)))
    return found
