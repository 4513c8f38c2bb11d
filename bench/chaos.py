"""The chaos bench: three workers in webhook mode on one PostgreSQL (the pgserver wheel's, started here) under a
steady load of several people, while the bench, in rounds, restarts PostgreSQL (`pg_ctl restart -m fast`), pauses it
(SIGSTOP of the postmaster and its children, then SIGCONT), SIGKILLs a random worker and the scheduler's leader and
starts them again.

The people write messages (each answered by the fake model, "Antwort auf <message>"), set reminders ("Erinnere mich
in 2 Minuten an ..."), and some ask `/deleteme` in the middle of the run. Telegram's side is the fake Bot API and
`chaos_world.Webhook`: a balancer that skips a worker that does not answer, and Telegram's retry of an update no
worker took with a 200. A worker not healthy within `--health-cap` seconds of a fault is killed and started again by
the bench (as a watchdog would), and that is written down as a fault.

Figures: messages lost (no answer) and answered more than once; reminders lost and sent twice; rows and files that
still hold an erased person's words; per restart and pause the seconds until every worker's /healthz is 200 again.

Usage: .venv/bin/python bench/chaos.py [--rounds 10] [--people 8] [--pause 20] [--seed 1]
"""
from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.chaos_world import (  # noqa: E402
    Server,
    Webhook,
    Workers,
    files_holding,
    leader,
    outbox_rows,
    rows_holding,
)
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402
from tests.scenarios.worker_child import USERS  # noqa: E402
from tests.scenarios.worker_pool import free_ports  # noqa: E402

WORKERS = 3
DONE = "Erledigt."  # how /deleteme's last answer begins (bot/texts: deleteme_done)


@dataclass
class Plan:
    """The run's shape."""

    rounds: int = 10
    people: int = 8
    deleters: int = 2  # the last people of the list ask /deleteme in the middle of the run
    pause: float = 20.0  # seconds PostgreSQL is stopped
    settle: float = 5.0  # seconds of load between two faults
    every: float = 3.0  # seconds between two messages of one person
    reminder_minutes: int = 2
    remind_every: int = 20  # every this many messages, half the people set a reminder
    backdate: float = 0.0  # the reminder request's date this long before it is posted (the accelerated clock)
    delay: float = 0.2  # the fake model's seconds per answer
    health_cap: float = 60.0  # a worker not healthy this long after a fault is started again
    post_timeout: float = 10.0  # the balancer's wait for a worker's answer
    drain: float = 60.0  # after the last round: wait for answers until none came for this long
    seed: int = 1
    keep: bool = False  # keep the workers' folders and logs (their path is printed)


@dataclass
class Figures:
    """What the run measured."""

    messages: int = 0
    lost: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)  # answered twice
    more: list[str] = field(default_factory=list)  # answered three times or more
    reminders: int = 0
    reminders_lost: list[str] = field(default_factory=list)
    reminders_twice: list[str] = field(default_factory=list)
    erased_rows: int = 0
    erased_files: list[str] = field(default_factory=list)
    erasures: int = 0
    restarts: list[float | None] = field(default_factory=list)  # per restart: seconds until all healthy (None: never)
    restart_took: list[float] = field(default_factory=list)  # seconds `pg_ctl restart` took
    pauses: list[float | None] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)  # what went wrong, with the round
    kills: int = 0
    retries: int = 0
    skipped: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0

    def goals_met(self, health_goal: float) -> bool:
        """0 lost, none answered three times, 0 reminders lost or twice, 0 bytes erased left, every worker healthy
        within `health_goal` after each restart."""
        healthy = all(s is not None and s <= health_goal for s in self.restarts)
        return not (self.lost or self.more or self.reminders_lost or self.reminders_twice or self.erased_rows
                    or self.erased_files) and healthy


class Chaos:
    """One run: the server, the workers, the people's load and the rounds of faults."""

    def __init__(self, plan: Plan, tg: FakeTelegram, server: Server, url: str, folder: Path,
                 session: aiohttp.ClientSession) -> None:
        self.plan, self.tg, self.server, self.url, self.folder = plan, tg, server, url, folder
        self.session = session
        self.rng = random.Random(plan.seed)
        ports, health = free_ports(WORKERS), free_ports(WORKERS)
        self.workers = Workers(tg, url, folder, ports, health, plan.delay)
        self.webhook = Webhook(session, ports, plan.post_timeout)
        self.people = list(USERS[:plan.people])
        self.deleters = self.people[len(self.people) - plan.deleters:]
        self.talking = set(self.people)
        self.said: dict[int, list[str]] = {u: [] for u in self.people}
        self.asked: list[tuple[int, str, float]] = []  # reminders: person, subject, due (time.time)
        self.erased: dict[int, str] = {}  # person -> their marker word, once /deleteme is done
        self.figures = Figures()
        self.round = 0
        self.started, self.wall = time.monotonic(), time.time()

    def say(self, text: str) -> None:
        print(f"{time.monotonic() - self.started:6.1f} s  {text}")

    async def progress(self) -> None:
        """A line every ten seconds: messages sent and answered, updates not taken yet."""
        while True:
            await asyncio.sleep(10)
            said = [(u, t) for u in self.people for t in self.said[u]]
            answered = sum(1 for u, t in said if self.answers(u, t))
            self.say(f"{len(said)} messages sent, {answered} answered, {self.webhook.pending()} updates not taken")

    def fault(self, text: str) -> None:
        line = f"round {self.round}: {text}"
        self.figures.faults.append(line)
        self.say(f"FAULT {line}")

    def marker(self, user: int) -> str:
        return f"Wort{user}x{self.plan.seed}"

    # --- the people -------------------------------------------------------------------------------------------
    def post(self, user: int, text: str, date: int | None = None) -> None:
        self.tg.send_text(user, text, date=date)
        self.webhook.send(self.tg.pending.pop())

    async def load(self) -> None:
        """Each talking person writes every `every` seconds; the ones not deleting set a reminder now and then."""
        n = 0
        while True:
            for user in sorted(self.talking):
                text = f"Nachricht {n} von {user}: {self.marker(user)}"
                self.said[user].append(text)
                self.post(user, text)
            if n % self.plan.remind_every == 0:
                self.remind(n)
            n += 1
            await asyncio.sleep(self.plan.every)

    def remind(self, n: int) -> None:
        minutes = self.plan.reminder_minutes
        for user in self.people[: len(self.people) // 2]:
            if user in self.deleters:
                continue
            subject = f"Tee {user}x{n}"
            sent = time.time() - self.plan.backdate
            unit = "Minute" if minutes == 1 else "Minuten"
            self.post(user, f"Erinnere mich in {minutes} {unit} an {subject}", date=int(sent))
            self.asked.append((user, subject, int(sent) + 60 * minutes))

    async def delete(self, user: int) -> None:
        """The person stops writing, waits for their answers, asks /deleteme and presses yes."""
        self.talking.discard(user)
        await self.wait(lambda: all(self.answers(user, t) for t in self.said[user]), 120)
        await self.wait(lambda: not self.webhook.open_for(user), 60)  # Telegram delivers a chat's updates in order
        self.say(f"{user} asks /deleteme")
        self.post(user, "/deleteme")
        question = await self.wait(lambda: self.button(user), 120)
        if question is None:
            self.fault(f"/deleteme of {user}: no question with a yes button")
            return
        self.say(f"{user} presses yes")
        self.tg.press_button(user, question, "deleteme:yes")
        self.webhook.send(self.tg.pending.pop())
        if await self.wait(lambda: any(m.get("chat_id") == user and str(m.get("text")).startswith(DONE)
                                       for m in [*self.tg.sent, *self.tg.edits]), 120):
            self.erased[user] = self.marker(user)
            self.say(f"{user}: /deleteme done")
        else:
            last = [str(m.get("text"))[:80] for m in [*self.tg.sent, *self.tg.edits] if m.get("chat_id") == user][-3:]
            self.fault(f"/deleteme of {user}: never said it was done (the last it said: {last})")

    def button(self, user: int) -> int | None:
        return next((m["message_id"] for m in self.tg.sent
                     if m["chat_id"] == user and "deleteme:yes" in str(m.get("reply_markup"))), None)

    def answers(self, user: int, text: str) -> int:
        want = "Antwort auf " + text
        return sum(1 for m in self.tg.sent if m["chat_id"] == user and m["text"] == want)

    async def wait(self, predicate: Any, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = predicate()
            if found:
                return found
            await asyncio.sleep(0.25)
        return None

    # --- the faults -------------------------------------------------------------------------------------------
    async def healthy_again(self, what: str, since: float) -> float | None:
        """Seconds until every worker is healthy after a fault; workers not healthy within the cap are restarted."""
        each = await self.workers.seconds_until_healthy(self.session, since, self.plan.health_cap)
        broken = [n for n, s in enumerate(each) if s is None]
        for n in broken:
            await self.workers.kill(n)
        await asyncio.gather(*(self.workers.start(n) for n in broken))
        if broken:
            self.fault(f"after the {what}: workers {', '.join(f'w{n}' for n in broken)} not healthy within "
                       f"{self.plan.health_cap:.0f} s (/healthz not 200); killed and started again")
            return None
        return max(s for s in each if s is not None)

    async def restart(self) -> None:
        began = time.monotonic()
        await asyncio.to_thread(self.server.restart)
        self.figures.restart_took.append(time.monotonic() - began)
        seconds = await self.healthy_again("PostgreSQL restart", time.monotonic())
        self.figures.restarts.append(seconds)
        self.say(f"restart ({self.figures.restart_took[-1]:.1f} s): every worker healthy after {_seconds(seconds)}")

    async def pause(self) -> None:
        await self.server.pause(self.plan.pause)
        seconds = await self.healthy_again(f"{self.plan.pause:.0f} s pause", time.monotonic())
        self.figures.pauses.append(seconds)
        self.say(f"pause {self.plan.pause:.0f} s: every worker healthy after {_seconds(seconds)}")

    async def kill(self, n: int, why: str) -> None:
        await self.workers.kill(n)
        self.figures.kills += 1
        await self.workers.start(n)
        self.say(f"killed {why} w{n} and started it again")

    async def kill_leader(self) -> None:
        holder = await self.wait(lambda: _leader_or_none(self.url), 15)
        if holder is None:
            self.fault("no worker held the scheduler's lease for 15 s (no reminder can go out)")
            return
        await self.kill(int(holder.removeprefix("w")), "the leader")

    async def rounds(self) -> None:
        deleting: list[asyncio.Task[None]] = []
        for round_ in range(1, self.plan.rounds + 1):
            self.round = round_
            self.say(f"round {self.round}")
            await asyncio.sleep(self.plan.settle)
            await self.restart()
            if self.round == (self.plan.rounds + 1) // 2:  # /deleteme while the faults go on
                deleting = [asyncio.create_task(self.delete(u)) for u in self.deleters]
            await asyncio.sleep(self.plan.settle)
            await self.pause()
            await asyncio.sleep(self.plan.settle)
            await self.kill(self.rng.randrange(WORKERS), "a random worker")
            await asyncio.sleep(self.plan.settle)
            await self.kill_leader()
        await asyncio.gather(*deleting)

    # --- the run ----------------------------------------------------------------------------------------------
    async def run(self) -> Figures:
        await self.workers.start(0)  # the first one migrates the database; the others start beside each other
        await asyncio.gather(*(self.workers.start(n) for n in range(1, WORKERS)))
        self.say("workers ready")
        loading, progress = asyncio.create_task(self.load()), asyncio.create_task(self.progress())
        try:
            await self.rounds()
        finally:
            loading.cancel()
        self.say("load stopped")
        await self.drain()
        progress.cancel()
        self.figures.seconds = time.monotonic() - self.started
        await self.workers.stop_all()
        await self.webhook.stop()
        self.count()
        return self.figures

    async def drain(self) -> None:
        """Until every update is taken and every message answered (or `drain` seconds pass without a new answer),
        and every reminder due has had time to go out."""
        answered, still = -1, time.monotonic()
        while time.monotonic() - still < self.plan.drain:
            now = sum(1 for u in self.people for t in self.said[u] if self.answers(u, t))
            if now == sum(len(said) for said in self.said.values()) and not self.webhook.pending():
                break
            if now != answered:
                answered, still = now, time.monotonic()
            await asyncio.sleep(1)
        last_due = max((due for _, _, due in self.asked), default=0)
        await asyncio.sleep(max(0.0, min(last_due + 15 - time.time(), 180)))
        await asyncio.sleep(5)  # a late second answer or push would show meanwhile

    def count(self) -> None:
        f = self.figures
        for user in self.people:
            for text in self.said[user]:
                f.messages += 1
                n = self.answers(user, text)
                (f.lost if n == 0 else f.repeated if n == 2 else f.more if n > 2 else []).append(text)
        for user, subject, due in self.asked:
            f.reminders += 1
            pushed = [m for m in self.tg.sent if m["chat_id"] == user
                      and m["text"].split("\n")[0].lower() == f"⏰ {subject}".lower()]
            if not pushed:
                f.reminders_lost.append(subject)
            elif len(pushed) > 1:
                at = [self.tg.sent_times[self.tg.sent.index(m)] - self.started for m in pushed]
                f.reminders_twice.append(f"{subject} (due at {due - self.wall:.1f} s, sent at "
                                         + ", ".join(f"{a:.1f} s" for a in at) + "; outbox: "
                                         + "; ".join(outbox_rows(self.url, f"⏰ {subject}", self.wall)) + ")")
        f.erasures = len(self.erased)
        words = list(self.erased.values())
        f.erased_rows = sum(rows_holding(self.url, words).values()) if words else 0
        f.erased_files = [p for found in files_holding(self.folder, words).values() for p in found]
        f.retries, f.skipped, f.statuses = self.webhook.retries, self.webhook.skipped, self.webhook.statuses


def _leader_or_none(url: str) -> str | None:
    try:
        return leader(url)
    except Exception:  # the server may be down a moment: ask again
        return None


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.1f} s"


def p95(values: list[float | None]) -> str:
    """The 95th percentile of the seconds (a worker that never came back counts as infinite)."""
    known = sorted(float("inf") if v is None else v for v in values)
    if not known:
        return "-"
    at = known[min(len(known) - 1, round(0.95 * (len(known) - 1)))]
    return "never" if at == float("inf") else f"{at:.1f} s"


async def chaos(plan: Plan) -> Figures:
    """Run the bench with `plan` and return its figures (the server and, unless kept, the folders are deleted)."""
    server = Server()
    folder = Path(tempfile.mkdtemp(prefix="mnemo-chaos-"))
    try:
        url = server.database("chaos")
        async with FakeTelegram(token="123:ABC") as tg, aiohttp.ClientSession() as session:
            if plan.keep:
                print(f"workers' folders and logs: {folder}")
            return await Chaos(plan, tg, server, url, folder, session).run()
    finally:
        server.stop()
        if not plan.keep:
            shutil.rmtree(folder, ignore_errors=True)


def report(f: Figures, plan: Plan) -> str:
    """The figures as the docs show them."""
    lines = [
        f"{plan.rounds} rounds, {plan.people} people, pause {plan.pause:.0f} s, {f.seconds:.0f} s",
        f"messages: {f.messages} sent, {len(f.lost)} lost, {len(f.repeated)} answered twice, "
        f"{len(f.more)} more often",
        f"reminders: {f.reminders} set, {len(f.reminders_lost)} lost, {len(f.reminders_twice)} sent twice",
        f"/deleteme: {f.erasures} done, {f.erased_rows} rows and {len(f.erased_files)} files still holding their words",
        f"restarts: every worker healthy after {', '.join(_seconds(s) for s in f.restarts)} (p95 {p95(f.restarts)})"
        f" once the server was back; pg_ctl restart took p95 {p95(list(f.restart_took))}",
        f"pauses: every worker healthy after {', '.join(_seconds(s) for s in f.pauses)} (p95 {p95(f.pauses)})",
        f"kills: {f.kills}; webhook: {f.retries} retries by Telegram, {f.skipped} workers skipped by the balancer, "
        f"non-200 statuses {f.statuses or 'none'}",
        f"faults: {len(f.faults)}", *(f"  {line}" for line in f.faults),
    ]
    for name, items in (("lost", f.lost), ("twice", f.repeated), ("reminders lost", f.reminders_lost),
                        ("reminders twice", f.reminders_twice)):
        if items:
            lines.append(f"{name} (first 5): {items[:5]}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=Plan.rounds)
    parser.add_argument("--people", type=int, default=Plan.people)
    parser.add_argument("--pause", type=float, default=Plan.pause)
    parser.add_argument("--settle", type=float, default=Plan.settle)
    parser.add_argument("--health-cap", type=float, default=Plan.health_cap)
    parser.add_argument("--every", type=float, default=Plan.every)
    parser.add_argument("--seed", type=int, default=Plan.seed)
    parser.add_argument("--keep", action="store_true", help="keep the workers' folders and logs")
    args = parser.parse_args()
    plan = Plan(rounds=args.rounds, people=args.people, pause=args.pause, settle=args.settle,
                health_cap=args.health_cap, seed=args.seed, keep=args.keep, every=args.every)
    figures = asyncio.run(chaos(plan))
    print(report(figures, plan))
    print("goals met" if figures.goals_met(10.0) else "goals NOT met")


if __name__ == "__main__":
    main()
