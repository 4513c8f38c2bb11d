"""The official `openai` SDK checks that tests/fakes/embedding_api.py speaks the embeddings API it fakes."""
from __future__ import annotations

import numpy as np
import openai

from tests.fakes.embedding_api import FakeEmbeddingServer


async def test_the_openai_sdk_reads_the_fakes_vectors_as_floats_and_as_base64() -> None:
    async with FakeEmbeddingServer(dim=12) as fake:
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-fake")
        texts = ["Miriam wohnt in Leipzig", "Bruno ist ein Labrador"]
        sdk = await client.embeddings.create(model="bge-m3", input=texts)  # the SDK asks for base64 itself
        floats = await client.embeddings.create(model="bge-m3", input=texts, encoding_format="float")
        await client.close()
    expected = fake.vectors.embed(texts)
    for answer in (sdk, floats):
        assert [row.index for row in sorted(answer.data, key=lambda r: r.index)] == [0, 1]
        got = np.array([row.embedding for row in sorted(answer.data, key=lambda r: r.index)], dtype=np.float32)
        assert np.allclose(got, expected, atol=1e-6)
    assert [body.get("encoding_format") for _p, _h, body in fake.requests] == ["base64", "float"]
