"""`mnemo reindex` onto an embedding server's model: progress lines, killed mid-way and resumed, switched in one step;
on SQLite and PostgreSQL, against a fake server over HTTP."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from memory.errors import ModelMismatch
from memory.ledgers.journal import NewMessage
from memory.search.turn_context import context_text
from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.embedding_api import FakeEmbeddingServer
from tests.test_embedding_server import server_embedder

pytestmark = pytest.mark.both_backends("the vector table replaced in one transaction")

ROOT = Path(__file__).resolve().parents[1]
COUNT = 150  # three batches of memory.search.reindex.BATCH
MAIN = "import sys; from bot.cli import main; sys.exit(main(sys.argv[1:]))"


def env_file(tmp_path: Path, fake: FakeEmbeddingServer, database_url: str | None) -> Path:
    lines = [f"MNEMO_DATA_DIR={tmp_path}", f"MNEMO_EMBEDDING_URL={fake.base_url}",
             f"MNEMO_EMBEDDING_MODEL={fake.model}", "MNEMO_EMBEDDING_BATCH_SIZE=64"]
    if database_url:
        lines.append(f"MNEMO_DATABASE_URL={database_url}")
    path = tmp_path / "reindex.env"
    path.write_text("\n".join(lines) + "\n")
    return path


async def reindex_process(env: Path) -> asyncio.subprocess.Process:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    return await asyncio.create_subprocess_exec(sys.executable, "-c", MAIN, "--env-file", str(env), "reindex",
                                                cwd=ROOT, env=clean, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)


async def test_reindex_onto_a_server_survives_a_kill_and_never_mixes_models(tmp_path: Path,
                                                                            database_url: str | None) -> None:
    old = FakeEmbedder(dim=64, name="bundled-stand-in")
    texts = [f"Nachricht {i}: Miriam und ich waren im Garten bei den Tomaten{i}" for i in range(COUNT - 1)]
    async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", old, database_url=database_url) as store:
        scope = await store.scope("mnemo", "anna")
        await store.messages.add_many(scope, [NewMessage("user", t, 1.7e9 + i) for i, t in enumerate(texts)])
        await store.notes.add(scope, "Bruno ist ein Labrador")
    async with FakeEmbeddingServer(dim=32) as fake:
        env = env_file(tmp_path, fake, database_url)
        fake.delay = 0.4  # each batch takes a while: the kill comes between two
        first = await reindex_process(env)
        assert first.stderr is not None
        line = (await asyncio.wait_for(first.stderr.readline(), 60)).decode()
        first.send_signal(signal.SIGKILL)
        await first.wait()
        assert line.strip() == f"reindex: 64/{COUNT} (42%)"
        async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", old, database_url=database_url) as store:
            scope = await store.scope("mnemo", "anna")  # the old model still serves meanwhile
            assert (await store.search(scope, "Labrador"))[0].text == "Bruno ist ein Labrador"
        fake.delay = 0.0
        second = await reindex_process(env)
        out, err = await asyncio.wait_for(second.communicate(), 120)
        assert second.returncode == 0, err.decode()
        progress = err.decode().split()
        assert f"{COUNT}/{COUNT}" in progress and "64/150" not in progress  # it went on where it was killed
        assert f"reindexed {COUNT} items; the memory now uses server/bge-m3" in out.decode()
        read = [context_text(before, text) for before, text in zip([None, *texts], texts)]  # each after the last
        embedded = [t for t in fake.inputs if t in read]
        assert set(embedded) == set(read) and len(embedded) <= len(read) + 64  # a batch cut off at most redone
        new = await server_embedder(fake)
        async with await MemoryStore.open(tmp_path / "mnemo.sqlite3", new, database_url=database_url) as store:
            scope = await store.scope("mnemo", "anna")
            hits = await store.search(scope, "Tomaten7 Garten", ("message",))
            assert hits[0].text == texts[7]
    with pytest.raises(ModelMismatch, match="server/bge-m3"):
        await MemoryStore.open(tmp_path / "mnemo.sqlite3", old, database_url=database_url)
