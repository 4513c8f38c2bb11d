"""Operator commands: doctor, backup, stats, export and import of one user's memory."""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.conversation.failures import log_words
from bot.embedding import BUNDLED, make_embedder, make_embedders, rerank_note, second_note, server_note
from bot.errors import BotError, ConfigError, LLMError
from bot.settings import Settings
from bot.voice.recordings import exported, where_kept
from memory import (
    DB_FILENAME,
    EXPORT_FORMAT,
    MIGRATIONS,
    Embedder,
    FailureCount,
    MeasuredCalibration,
    MemoryStore,
    MemoryStoreError,
    NewMessage,
    Scope,
    ServerFacts,
    applied_migrations,
    backup,
    backup_name,
    check_integrity,
    open_database,
    pending_migrations,
    scope_stats,
    server_facts,
    shown_url,
)
from scheduler.budget import BudgetStatus, TokenBudget


@dataclass(frozen=True)
class Check:
    """One line of `mnemo doctor`."""

    name: str
    ok: bool
    detail: str


async def open_store(settings: Settings) -> MemoryStore:
    """Open the configured store (migrating it, with a backup first when needed)."""
    embedder, second = await asyncio.to_thread(make_embedders, settings)
    return await MemoryStore.open(settings.data_dir, embedder, semantic_dedupe=settings.dedupe_threshold,
                                      search_cache_bytes=settings.search_cache_mb * 2**20,
                                      database_url=settings.database_url, second=second, calibrate=True)


async def make_backup(settings: Settings, target: Path | None = None) -> Path:
    """Copy the database to target (default: a timestamped file in DATA_DIR/backups)."""
    store = await open_store(settings)
    try:
        return await backup(store.db, target or backup_name(settings.data_dir / "backups"))
    finally:
        await store.close()


async def migration_plan(settings: Settings) -> list[str]:
    """The migrations a start would apply, without applying them (dry run)."""
    path = settings.data_dir / DB_FILENAME
    if not settings.database_url and not path.exists():
        return [m.__name__ for m in MIGRATIONS]
    db = await open_database(settings.data_dir, settings.database_url)
    try:
        return pending_migrations(await applied_migrations(db))
    finally:
        await db.close()


async def stats(settings: Settings) -> list[dict[str, Any]]:
    """Counts per kind and per user."""
    store = await open_store(settings)
    try:
        return await scope_stats(store.db)
    finally:
        await store.close()


async def background_budget(store: MemoryStore, settings: Settings) -> BudgetStatus:
    """Today's background tokens against MNEMO_BACKGROUND_TOKENS_PER_DAY."""
    return await TokenBudget(store.usage, settings.background_tokens_per_day, settings.zone).status(time.time())


async def budget_line(settings: Settings) -> str:
    """Today's background tokens, as one line for `mnemo stats`."""
    store = await open_store(settings)
    try:
        return (await background_budget(store, settings)).describe()
    finally:
        await store.close()


def thresholds_check(store: MemoryStore, found: MeasuredCalibration | None, settings: Settings) -> Check:
    """The recorded model's cosine thresholds and where they come from (memory.search.calibration)."""
    cal = store.calibration
    keyword = f"{cal.keyword:g}" if cal.keyword is not None else "words only"
    values = f"duplicate {cal.duplicate:g}, relevance floor {cal.relevant:g}, one-word keyword {keyword}"
    if found is not None:
        when = datetime.fromtimestamp(found.measured_at, settings.zone)
        values = f"measured {when:%Y-%m-%d %H:%M} on {found.pairs} pairs: {values}"
    elif store.index.embedder.name.startswith(BUNDLED):
        values = f"the bundled e5's: {values}"
    else:
        values = f"not measured yet (the next start or `mnemo reindex` measures them); fixed meanwhile: {values}"
    overrides = [f"{name}={value:g}" for name, value in (("MNEMO_RELEVANCE_FLOOR", settings.relevance_floor),
                                                          ("MNEMO_DEDUPE_THRESHOLD", settings.dedupe_threshold))
                 if value is not None]
    return Check("thresholds", True, values + (f" ({', '.join(overrides)} set instead)" if overrides else ""))


def describe_failures(counts: list[FailureCount]) -> str:
    """The failure counters as one line: 'none recorded', or each kind with its count and last time."""
    return "; ".join(c.describe() for c in counts) if counts else "none recorded"


async def failures_line(settings: Settings) -> str:
    """The failure counters kept in the database, as one line for `mnemo stats`."""
    store = await open_store(settings)
    try:
        return "failures: " + describe_failures(await store.failures.all())
    finally:
        await store.close()


def index_check(problems: list[str]) -> Check:
    """The doctor's line on the search index: items, documents, vectors and full-text entries in step."""
    if not problems:
        return Check("search index", True, "every item has its document, vector and full-text entries")
    return Check("search index", False, f"{len(problems)} problems, e.g. " + "; ".join(problems[:3]))


async def export_user(settings: Settings, user_id: str) -> dict[str, Any]:
    """All of one user's data with this companion, as a JSON-ready document."""
    store = await open_store(settings)
    try:
        return await exported(store, await store.scope(settings.companion_id, user_id))  # the chat's /export
    finally:
        await store.close()


async def import_user(settings: Settings, data: dict[str, Any], user_id: str | None = None) -> dict[str, int]:
    """Load an export into this deployment (new ids; note sources follow their messages); returns counts."""
    if data.get("format") != EXPORT_FORMAT:
        raise BotError(f"This file is not a mnemo export (format {EXPORT_FORMAT}).")
    store = await open_store(settings)
    try:
        scope = await store.scope(settings.companion_id, user_id or data["user_id"])
        return await _load(store, scope, data)
    finally:
        await store.close()


async def _load(store: MemoryStore, scope: Scope, data: dict[str, Any]) -> dict[str, int]:
    old_messages = data.get("messages", [])
    new = await store.messages.add_many(scope, [
        NewMessage(m["role"], m["text"], m["created_at"], m.get("channel", ""), m.get("channel_message_id"),
                   m.get("origin") or "text")
        for m in old_messages
    ]) if old_messages else []
    ids = {old["id"]: msg.id for old, msg in zip(old_messages, new)}
    counts = {"messages": len(new), "notes": 0, "profile": 0, "thoughts": 0, "diary": 0, "topics": 0, "rules": 0}
    for n in data.get("notes", []):
        if n.get("valid_to") is None:
            sources = [ids[i] for i in json.loads(n.get("source_message_ids") or "[]") if i in ids]
            await store.notes.add(scope, n["text"], kind=n["kind"], importance=n["importance"],
                                  source_message_ids=sources, created_at=n["created_at"], dedupe=False, reason="import")
            counts["notes"] += 1
    for p in data.get("profile_entries", []):
        await store.profile.set(scope, p["category"], p["key"], p["value"], importance=p["importance"], reason="import")
        counts["profile"] += 1
    for th in data.get("thoughts", []):
        await store.thoughts.add(scope, th["text"], origin=th["origin"], created_at=th["created_at"])
        counts["thoughts"] += 1
    for d in data.get("diary_entries", []):
        await store.diary.add(scope, d["day"], d["text"], created_at=d["created_at"])
        counts["diary"] += 1
    for tp in data.get("open_topics", []):
        if tp["status"] == "open":
            await store.topics.add(scope, tp["text"], due_at=tp["due_at"], origin=tp["origin"])
            counts["topics"] += 1
    for r in data.get("learned_rules", []):
        if r["status"] in ("active", "disabled"):
            rule = await store.rules.propose(scope, r["text"])
            await store.rules.decide(scope, rule.id, r["status"], reason="import")
            counts["rules"] += 1
    counts["rhythm"] = await store.rhythm.restore(scope, data.get("rhythm", []))
    counts["reactions"] = await store.reactions.restore(scope, data.get("reactions", []), ids)
    return counts


async def doctor(settings: Settings, *, check_model: bool = True) -> list[Check]:
    """Check configuration, driver, embedder, schema, model, messengers, MCP servers and clock."""
    channels = ", ".join(settings.active_channels)
    checks = [Check("configuration", True, f"data dir {settings.data_dir}, channels {channels}")]
    from memory import sqlite_module

    try:
        module = sqlite_module()
        import sqlite_vec

        checks.append(Check("sqlite driver", True,
                            f"{module.__name__} {module.sqlite_version}, sqlite-vec {sqlite_vec.__version__}"))
    except MemoryStoreError as exc:
        return checks + [Check("sqlite driver", False, str(exc))]
    try:
        embedder = await asyncio.to_thread(make_embedder, settings)
        vector = await asyncio.to_thread(embedder.embed, ["Hallo"], "query")
        served = await asyncio.to_thread(server_note, embedder)
        checks.append(Check("embedding model", True, f"{embedder.name}, {vector.shape[1]} dims{served}"))
    except MemoryStoreError as exc:
        return checks + [Check("embedding model", False, str(exc))]
    checks.append(Check("second signal", *await asyncio.to_thread(second_note, settings, embedder)))
    checks.append(Check("reranking", *await rerank_note(settings)))
    checks.extend(await _database_checks(settings, embedder))
    if check_model:
        checks.append(await _model_check(settings))
    checks.extend(await _messenger_checks(settings))
    checks.append(Check("voice recordings", True, where_kept(settings.data_dir, settings.voice_keep)))
    checks.extend(await mcp_checks(settings))
    now = datetime.now(settings.zone)
    checks.append(Check("clock", now.year >= 2024, f"{now:%Y-%m-%d %H:%M %Z} in {settings.timezone}"))
    return checks


async def _database_checks(settings: Settings, embedder: Embedder) -> list[Check]:
    """The database: to be created, to be migrated, or up to date with its index, budget, failures and inbox."""
    if settings.database_url:
        return await _postgres_checks(settings, embedder)
    path = settings.data_dir / DB_FILENAME
    try:
        todo = await migration_plan(settings)
        if not path.exists():
            return [Check("database", True, f"{path} is created at the first start")]
        if todo:
            return [Check("database", True, f"{path}; the next start applies {', '.join(todo)} (after a backup)")]
        return await _store_checks(settings, embedder, str(path))
    except MemoryStoreError as exc:
        return [Check("database", False, str(exc))]


async def _postgres_checks(settings: Settings, embedder: Embedder) -> list[Check]:
    """MNEMO_DATABASE_URL's server: reached, its version and extensions, then the schema and the store as on SQLite."""
    url = settings.database_url or ""
    where = shown_url(url)
    try:
        db = await open_database(settings.data_dir, url)
    except (MemoryStoreError, ValueError) as exc:
        return [Check("postgresql", False, str(exc))]
    try:
        facts = await server_facts(db)
        todo = pending_migrations(await applied_migrations(db))
    finally:
        await db.close()
    checks = [Check("postgresql", True, f"{where}, PostgreSQL {facts.version}"), *extension_checks(facts)]
    if todo:
        done = "creates the schema" if len(todo) == len(MIGRATIONS) else f"applies {', '.join(todo)}"
        return checks + [Check("database", True, f"{where}; the next start {done}")]
    try:
        return checks + await _store_checks(settings, embedder, where)
    except MemoryStoreError as exc:
        return checks + [Check("database", False, str(exc))]


def extension_checks(facts: ServerFacts) -> list[Check]:
    """What pgvector and pg_trgm, present or not, mean for mnemo (neither is required)."""
    vector = facts.extensions.get("vector", "")
    kept = "not needed: mnemo keeps each vector's bits in a bytea column and ranks them in its own process"
    if vector:
        vector_line = f"{vector} installed; {kept}"
    else:
        vector_line = f"{'available, not installed' if 'vector' in facts.extensions else 'not on this server'}; {kept}"
    trgm = facts.extensions.get("pg_trgm", "")
    parts = "not needed: word parts ('Kino' in 'Kinoabend') are found in the texts mnemo keeps of each person's " \
            "memory in its own process"
    trgm_line = f"{trgm or ('available, not installed' if 'pg_trgm' in facts.extensions else 'not on this server')}" \
                f"; {parts}"
    return [Check("pgvector", True, vector_line), Check("pg_trgm", True, trgm_line)]


async def _store_checks(settings: Settings, embedder: Embedder, where: str) -> list[Check]:
    """An up-to-date store: its index integrity, background budget, failures and (with Matrix) waiting events."""
    store = await MemoryStore.open(settings.data_dir, embedder,  # checks the recorded model; writes nothing
                                   database_url=settings.database_url)
    try:
        problems = await check_integrity(store)
        budget = await background_budget(store, settings)
        failed = await store.failures.all()
        thresholds = thresholds_check(store, await store.measured_calibration(), settings)
        unreadable = await _matrix_unreadable(store) if settings.matrix_homeserver else None
    finally:
        await store.close()
    checks = [Check("database", True, f"{where}; schema up to date"), index_check(problems),
              thresholds, Check("background budget", True, budget.describe()),
              Check("failures", True, describe_failures(failed))]
    return checks + ([unreadable] if unreadable is not None else [])


async def _matrix_unreadable(store: MemoryStore) -> Check:
    """How many encrypted Matrix events wait for their key (answered once it comes) and how many were given up (the
    person was told) since the database began."""
    from bot.channels.matrix.rooms import still_encrypted

    waiting = still_encrypted(entry.payload for entry in await store.inbox.unhandled("matrix"))
    given_up = await store.failures.get("matrix.unreadable")
    return Check("matrix encrypted events", True, f"waiting for their key: {waiting}; given up: {given_up}")


async def _model_check(settings: Settings) -> Check:
    from bot.llm.factory import make_llm

    llm = make_llm(settings.chat_provider, settings.chat_model, settings.chat_base_url, settings.chat_api_key, 20)
    try:
        ping = getattr(llm, "ping", None)
        if ping is not None:
            await ping()
        return Check("chat model", True, f"{settings.chat_model} at {settings.chat_base_url or settings.chat_provider}")
    except LLMError as exc:
        return Check("chat model", False, log_words(exc))  # a refusal names the setting to change
    finally:
        close = getattr(llm, "aclose", None)
        if close is not None:
            await close()


async def _messenger_checks(settings: Settings) -> list[Check]:
    out = []
    if settings.telegram_token:
        from telegram import Bot
        from telegram.error import TelegramError

        bot = Bot(settings.telegram_token, base_url=settings.telegram_base_url)
        try:
            async with bot:
                me = await bot.get_me()
            out.append(Check("telegram", True, f"@{me.username}"))
        except TelegramError as exc:
            out.append(Check("telegram", False, f"getMe failed: {exc}"))
    if settings.matrix_homeserver and settings.matrix_user_id:
        out.extend(await _matrix_check(settings))
    return out


async def _matrix_check(settings: Settings) -> list[Check]:
    import nio

    from bot.channels.matrix.config import E2E_AVAILABLE
    from bot.channels.matrix.device_keys import doctor_line
    from bot.channels.matrix.session import Session

    client = nio.AsyncClient(settings.matrix_homeserver or "", settings.matrix_user_id or "")
    saved = Session(settings.data_dir / "matrix", settings.matrix_homeserver or "", settings.matrix_user_id or "")
    logged_in = False  # a device made only for this check is logged out again, so no check leaves one behind
    try:
        token = settings.matrix_access_token or saved.saved_token()
        if token:
            client.access_token = token
        elif settings.matrix_password:
            login = await client.login(settings.matrix_password, device_name="mnemo-doctor")
            if isinstance(login, nio.LoginError):
                return [Check("matrix", False, f"login failed: {login.message}")]
            logged_in = True
        else:
            return [Check("matrix", False, "set MNEMO_MATRIX_PASSWORD or MNEMO_MATRIX_ACCESS_TOKEN")]
        who = await client.whoami()
        if isinstance(who, nio.WhoamiError):
            return [Check("matrix", False, f"whoami failed: {who.message}")]
        checks = [Check("matrix", True, who.user_id)]
        if token and who.device_id and E2E_AVAILABLE:  # the running device's keys (not a device made for the check)
            kept, line = await doctor_line(client, settings.data_dir / "matrix", who.device_id,
                                           settings.matrix_pickle_key)
            checks.append(Check("matrix crypto", kept, line))
        return checks
    except (TimeoutError, OSError, nio.exceptions.ProtocolError) as exc:
        return [Check("matrix", False, f"{settings.matrix_homeserver} unreachable: {exc}")]
    finally:
        if logged_in:
            await client.logout()
        await client.close()


async def mcp_checks(settings: Settings) -> list[Check]:
    """One line per MCP server: reached, with the tools the model is offered, or why it cannot be reached."""
    from bot.mcp.config import read_servers
    from bot.mcp.toolbox import survey

    try:
        servers = read_servers(settings.mcp_servers)
    except ConfigError as exc:
        return [Check("mcp servers", False, str(exc))]
    reports = await asyncio.gather(*(survey(server) for server in servers))
    return [Check(f"mcp {report.name}", report.ok, report.detail) for report in reports]


def format_checks(checks: list[Check]) -> str:
    """A table for the terminal."""
    width = max(len(c.name) for c in checks)
    return "\n".join(f"{'ok ' if c.ok else 'FAIL'} {c.name.ljust(width)}  {c.detail}" for c in checks)


def timestamp() -> str:
    """Now, for file names."""
    return time.strftime("%Y%m%d-%H%M%S")
