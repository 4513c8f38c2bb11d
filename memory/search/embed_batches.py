"""Embeddings in batches across turns: concurrent requests share one embedder call, and no text is embedded twice.

A turn asks for a few texts (its message as a document, the same message as a query, a reply, notes); fifty people
writing at once ask for many. The batcher keeps the requests of a short wait (`WAIT`, a few milliseconds) in one
queue per purpose and hands them to the embedder as one call of at most `MAX_BATCH` texts, in a worker thread, so
the event loop stays free. While a batch runs, the next one gathers: under load no one waits for the timer. The wait
is only taken where company is to be had: when the last call of the purpose served more than one asker. One person
writing, or an import adding note after note, asks alone each time; without the wait e5 alone ingested 36-45 notes/s
one at a time instead of 31-36 (`bench/load.py --side-by-side`, docs/benchmarks.md). A text asked for again while it
is queued or being embedded joins that request, and the last `RECENT` vectors of each purpose are kept, so a turn
never embeds the same text twice (a query asked for by the crisis check and then by the search, a reply several
people got alike).

A text is embedded by its first `EMBED_CHARS` characters (`head`), the window e5 reads: a 30,000-character reply fed
whole cost e5 50 s on a busy 2-core machine, every other turn waiting for the embedder, and USE 160 MB more memory
at its peak, for vectors no better than the beginning's (issue 52).

A failing embedder fails every request of its batch with `EmbeddingFailed`; a batch whose worker is cancelled
fails its requests the same way. A request whose own caller is cancelled leaves the others waiting.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memory.errors import EmbeddingFailed
from memory.search.embedder import Embedder, Purpose

log = logging.getLogger(__name__)

WAIT = 0.004  # seconds a lone request waits for company before its batch goes, where the last call had company
MAX_BATCH = 32  # texts per embedder call; more go in the next call
RECENT = 512  # vectors kept per purpose after they were embedded
EMBED_CHARS = 2_000  # what of a text is embedded: e5 reads 512 tokens, about 2,000 characters of German


def head(text: str) -> str:
    """The part of a text its vector is made of."""
    return text[:EMBED_CHARS]


class EmbedBatcher:
    """The one way the search index reaches its embedder: batched, deduplicated, off the event loop."""

    def __init__(self, embedder: Embedder, wait: float = WAIT, max_batch: int = MAX_BATCH,
                 recent: int = RECENT) -> None:
        self.embedder = embedder
        self.wait, self.max_batch, self.keep = wait, max_batch, recent
        self._queued: dict[Purpose, OrderedDict[str, asyncio.Future[np.ndarray]]] = {
            "query": OrderedDict(), "document": OrderedDict()}
        self._running: dict[Purpose, dict[str, asyncio.Future[np.ndarray]]] = {"query": {}, "document": {}}
        self.recent: dict[Purpose, OrderedDict[str, np.ndarray]] = {"query": OrderedDict(), "document": OrderedDict()}
        self._workers: dict[Purpose, asyncio.Task[None] | None] = {"query": None, "document": None}
        self._filled: dict[Purpose, asyncio.Event] = {}  # made with each worker, on the loop it runs in
        # askers (calls of `embed`/`ahead` that queued a text) since the last batch was taken, and whether that
        # batch had more than one: a first request waits for company only where there was some
        self._askers: dict[Purpose, int] = {"query": 0, "document": 0}
        self._company: dict[Purpose, bool] = {"query": True, "document": True}
        self.calls = 0  # embedder calls made (bench/load.py reports texts per call)
        self.texts = 0

    async def embed(self, texts: Sequence[str], purpose: Purpose = "document") -> np.ndarray:
        """Vectors of texts, shape (len(texts), dim); each distinct text embedded at most once while it is recent."""
        if not texts:
            return np.zeros((0, self.embedder.dim), np.float32)
        texts = [head(text) for text in texts]
        distinct = list(dict.fromkeys(texts))
        futures = self._asked(distinct, purpose)
        # shield: one caller cancelled must not cancel the vector other turns wait for too.
        done = dict(zip(distinct, await asyncio.gather(*(asyncio.shield(f) for f in futures))))
        return np.stack([done[text] for text in texts])

    def ahead(self, texts: Sequence[str], purpose: Purpose = "document") -> None:
        """Queue texts without waiting for their vectors: `embed` asked later joins them, or finds them kept (a
        failure is then raised there)."""
        for future in self._asked(list(dict.fromkeys(head(text) for text in texts)), purpose):
            future.add_done_callback(_retrieved)

    async def stop(self) -> None:
        """Cancel the running batches: their requests and the queued ones fail with `EmbeddingFailed`."""
        workers = [task for task in self._workers.values() if task is not None]
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    def forget(self) -> None:
        """Drop the recent vectors (a benchmark that wants every message new)."""
        for kept in self.recent.values():
            kept.clear()

    def _asked(self, texts: list[str], purpose: Purpose) -> list[asyncio.Future[np.ndarray]]:
        """The futures of one asker's distinct texts; the asker is counted if it queued any."""
        queued = len(self._queued[purpose])
        futures = [self._future(text, purpose) for text in texts]
        if len(self._queued[purpose]) > queued:
            self._askers[purpose] += 1
        return futures

    def _future(self, text: str, purpose: Purpose) -> asyncio.Future[np.ndarray]:
        """The future of one text's vector: already known, queued or being embedded, or newly queued."""
        loop = asyncio.get_running_loop()
        kept = self.recent[purpose].get(text)
        if kept is not None:
            self.recent[purpose].move_to_end(text)
            known: asyncio.Future[np.ndarray] = loop.create_future()
            known.set_result(kept)
            return known
        future = self._queued[purpose].get(text) or self._running[purpose].get(text)
        if future is None:
            future = loop.create_future()
            self._queued[purpose][text] = future
            if self._workers[purpose] is None:
                self._filled[purpose] = asyncio.Event()
                self._workers[purpose] = loop.create_task(self._work(purpose), name=f"embed-batches-{purpose}")
            if len(self._queued[purpose]) >= self.max_batch:
                self._filled[purpose].set()
        return future

    async def _work(self, purpose: Purpose) -> None:
        """Send batches while requests are queued; a lone request waits `wait` for company first, where the last
        call had company."""
        try:
            first = True
            while self._queued[purpose]:
                if first and self._company[purpose] and len(self._queued[purpose]) < self.max_batch:
                    self._filled[purpose].clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._filled[purpose].wait(), self.wait)
                first = False
                await self._batch(purpose)
        finally:
            self._workers[purpose] = None
            if self._queued[purpose]:  # cancelled while requests waited: they fail, never hang
                self._fail(self._queued[purpose], EmbeddingFailed("embedding was stopped before it ran"))

    async def _batch(self, purpose: Purpose) -> None:
        """Embed up to `max_batch` queued texts in one call and hand each request its vector (or the error)."""
        queued = self._queued[purpose]
        batch = {text: queued.pop(text) for text in list(queued)[:self.max_batch]}
        self._company[purpose], self._askers[purpose] = self._askers[purpose] > 1, 0
        self._running[purpose] = batch
        try:
            aembed = getattr(self.embedder, "aembed", None)  # an embedding server's: asked from the loop
            vectors = await (aembed(list(batch), purpose) if aembed is not None
                             else asyncio.to_thread(self.embedder.embed, list(batch), purpose))
            vectors = self._checked(vectors, len(batch))
        except asyncio.CancelledError:
            self._fail(batch, EmbeddingFailed("embedding was stopped while it ran"))
            raise
        except Exception as exc:
            log.warning("embedding a batch of %d texts failed: %r", len(batch), exc)
            failed = exc if isinstance(exc, EmbeddingFailed) else EmbeddingFailed(f"embedding failed: {exc}")
            failed.__cause__ = None if failed is exc else exc
            self._fail(batch, failed)
            return
        finally:
            self._running[purpose] = {}
        self.calls += 1
        self.texts += len(batch)
        for text, vector in zip(batch, vectors):
            self._remember(purpose, text, vector)
        await self._hand_out(batch, vectors)

    @staticmethod
    async def _hand_out(batch: dict[str, asyncio.Future[np.ndarray]], vectors: np.ndarray) -> None:
        """Give each request its vector, one per pass of the event loop: 32 turns resumed at once would run one after
        another in one pass, and every timer waits for the whole pass. (The 41 ms stalls bench/load.py showed at 50
        people were the garbage collector's, `bot.app.settled_heap`.) Stopped meanwhile, the rest get theirs at
        once."""
        pairs = [(future, vector) for future, vector in zip(batch.values(), vectors) if not future.done()]
        try:
            for future, vector in pairs:
                if not future.done():
                    future.set_result(vector)
                await asyncio.sleep(0)
        finally:
            for future, vector in pairs:
                if not future.done():
                    future.set_result(vector)

    def _checked(self, vectors: object, count: int) -> np.ndarray:
        out = np.asarray(vectors, dtype=np.float32)
        if out.shape != (count, self.embedder.dim):
            raise EmbeddingFailed(f"embedder returned shape {out.shape}, expected ({count}, {self.embedder.dim})")
        return out

    def _remember(self, purpose: Purpose, text: str, vector: np.ndarray) -> None:
        kept = self.recent[purpose]
        kept[text] = vector
        kept.move_to_end(text)
        while len(kept) > self.keep:
            kept.popitem(last=False)

    @staticmethod
    def _fail(futures: dict[str, asyncio.Future[np.ndarray]], error: BaseException) -> None:
        for future in futures.values():
            if not future.done():
                future.set_exception(error)
        futures.clear()


def _retrieved(future: asyncio.Future[np.ndarray]) -> None:
    """Mark a queued-ahead vector's failure as seen: whoever needs the vector asks again and gets the error."""
    if not future.cancelled():
        future.exception()
