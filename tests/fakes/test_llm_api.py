"""Prove the real openai and anthropic SDKs work against FakeLLM."""

from __future__ import annotations

import json

import anthropic
import openai
import pytest
from anthropic.types import TextBlockParam
from openai.types.chat import ChatCompletionMessageParam

from tests.fakes.llm_api import FakeLLM, Reply, count_tokens


def _oa(llm: FakeLLM, timeout: float = 10.0) -> openai.AsyncOpenAI:
    """OpenAI client pointed at the fake."""
    url = llm.openai_base_url
    return openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0, timeout=timeout)


def _an(llm: FakeLLM) -> anthropic.AsyncAnthropic:
    """Anthropic client pointed at the fake."""
    return anthropic.AsyncAnthropic(
        base_url=llm.anthropic_base_url, api_key="x", max_retries=0
    )


MSGS: list[ChatCompletionMessageParam] = [
    {"role": "system", "content": "You are mnemo."},
    {"role": "user", "content": "hello there, friend"},
]


@pytest.mark.asyncio
async def test_openai_plain_reply_and_usage() -> None:
    async with FakeLLM() as llm, _oa(llm) as client:
        llm.enqueue("Hi! How are you today?")
        resp = await client.chat.completions.create(model="m1", messages=MSGS)
        assert resp.choices[0].message.content == "Hi! How are you today?"
        assert resp.choices[0].finish_reason == "stop"
        assert resp.model == "m1"
        assert resp.usage is not None
        assert (
            resp.usage.prompt_tokens
            == count_tokens("You are mnemo.\nhello there, friend")
            > 0
        )
        assert (
            resp.usage.total_tokens
            == resp.usage.prompt_tokens + resp.usage.completion_tokens
        )
        req = llm.last_request
        assert (req.api, req.path) == ("openai", "/v1/chat/completions")
        assert req.headers["authorization"] == "Bearer x"
        assert "hello there" in req.prompt_text and "mnemo" in req.prompt_text


@pytest.mark.asyncio
async def test_openai_tool_calls() -> None:
    async with FakeLLM() as llm, _oa(llm) as client:
        llm.enqueue_tool_calls(
            [("remember", {"fact": "likes tea"}), ("forget", {"id": 3})]
        )
        resp = await client.chat.completions.create(model="m", messages=MSGS)
        choice = resp.choices[0]
        assert choice.finish_reason == "tool_calls"
        calls = choice.message.tool_calls or []
        fns = [c.function for c in calls if c.type == "function"]
        assert [f.name for f in fns] == ["remember", "forget"]
        assert json.loads(fns[0].arguments) == {"fact": "likes tea"}
        assert calls[0].id != calls[1].id


@pytest.mark.asyncio
async def test_openai_errors() -> None:
    async with FakeLLM() as llm, _oa(llm) as client:
        llm.enqueue_error(429, retry_after=7)
        with pytest.raises(openai.RateLimitError) as rate:
            await client.chat.completions.create(model="m", messages=MSGS)
        assert rate.value.response.headers["retry-after"] == "7"
        llm.enqueue_error(500, "boom")
        with pytest.raises(openai.InternalServerError, match="boom"):
            await client.chat.completions.create(model="m", messages=MSGS)


@pytest.mark.asyncio
async def test_openai_streaming_and_models() -> None:
    async with FakeLLM(models=["small", "big"]) as llm, _oa(llm) as client:
        llm.enqueue("a streamed reply that spans several chunks")
        stream = await client.chat.completions.create(
            model="m",
            messages=MSGS,
            stream=True,
            stream_options={"include_usage": True},
        )
        text, usage = "", None
        async for chunk in stream:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
            usage = chunk.usage or usage
        assert text == "a streamed reply that spans several chunks"
        assert usage is not None and usage.completion_tokens == count_tokens(text)
        assert [m.id async for m in client.models.list()] == ["small", "big"]


@pytest.mark.asyncio
async def test_openai_timeout_and_responder() -> None:
    async with (
        FakeLLM() as llm,
        _oa(llm, timeout=0.2) as slow,
        _oa(llm) as client,
    ):
        llm.enqueue_delay(5)
        with pytest.raises(openai.APITimeoutError):
            await slow.chat.completions.create(model="m", messages=MSGS)
        llm.responder = lambda body: (
            Reply(text="{}") if "JSON" in json.dumps(body) else "chat"
        )
        r1 = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "extract JSON"}]
        )
        r2 = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
        assert (r1.choices[0].message.content, r2.choices[0].message.content) == (
            "{}",
            "chat",
        )
        assert len(llm.requests) == 3


@pytest.mark.asyncio
async def test_anthropic_plain_reply_and_cached_system() -> None:
    async with FakeLLM() as llm, _an(llm) as client:
        llm.enqueue("Hello from claude")
        system: list[TextBlockParam] = [
            {
                "type": "text",
                "text": "You are mnemo.",
                "cache_control": {"type": "ephemeral"},
            }
        ]
        msg = await client.messages.create(
            model="claude-x",
            max_tokens=100,
            system=system,
            messages=[{"role": "user", "content": "hello there, friend"}],
        )
        assert (
            msg.content[0].type == "text" and msg.content[0].text == "Hello from claude"
        )
        assert msg.stop_reason == "end_turn"
        assert msg.usage.input_tokens == count_tokens(
            "You are mnemo.\nhello there, friend"
        )
        assert msg.usage.cache_read_input_tokens == 0
        req = llm.last_request
        assert (req.api, req.path) == ("anthropic", "/v1/messages")
        assert req.json["system"] == system
        assert "x" in (
            req.headers.get("x-api-key"),
            req.headers.get("authorization", "").removeprefix("Bearer "),
        )
        assert "anthropic-version" in req.headers


@pytest.mark.asyncio
async def test_anthropic_tool_use_stream_and_rate_limit() -> None:
    async with FakeLLM() as llm, _an(llm) as client:
        llm.enqueue_tool_call("remember", {"fact": "likes tea"})
        msg = await client.messages.create(
            model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        assert msg.stop_reason == "tool_use"
        block = msg.content[0]
        assert (
            block.type == "tool_use"
            and block.name == "remember"
            and block.input == {"fact": "likes tea"}
        )

        llm.enqueue("streamed anthropic text")
        async with client.messages.stream(
            model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as s:
            final = await s.get_final_message()
        assert (
            final.content[0].type == "text"
            and final.content[0].text == "streamed anthropic text"
        )

        llm.enqueue_error(429, retry_after=2)
        with pytest.raises(anthropic.RateLimitError) as err:
            await client.messages.create(
                model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        assert isinstance(err.value.body, dict)
        assert err.value.body["error"]["type"] == "rate_limit_error"
