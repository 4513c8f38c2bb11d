"""Shared fixtures: a real store in tmp_path with the deterministic embedder."""
from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest

from memory.store import MemoryStore
from tests.fakes.embedder import FakeEmbedder


@pytest.fixture(autouse=True)
def _no_outside_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that tries to reach anything but 127.0.0.1."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else address
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            raise ConnectionRefusedError(f"test tried to reach {host}; only 127.0.0.1 is allowed")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
async def store(tmp_path, embedder) -> AsyncIterator[MemoryStore]:  # type: ignore[no-untyped-def]
    s = await MemoryStore.open(tmp_path / "mnemo.sqlite3", embedder, semantic_dedupe=0.97)
    yield s
    await s.close()
