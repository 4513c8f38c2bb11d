"""The OpenAI and Anthropic adapters (our own OpenAI-compatible client, the Anthropic SDK) talking HTTP to the local
FakeLLM, and the OpenAI client against a server that answers garbage."""
from __future__ import annotations

import itertools
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from bot.errors import ConfigError, LLMBadOutput, LLMRateLimited, LLMRejected, LLMUnavailable
from bot.llm.anthropic_api import AnthropicChat
from bot.llm.factory import make_llm
from bot.llm.openai_api import OpenAIChat
from bot.llm.port import ChatMessage, CompletionRequest, SystemBlock, ToolSpec, backoff_delays
from tests.fakes.llm_api import FakeLLM, Reply, count_tokens

KEY = "sk-test-secret-key"
HELLO = [ChatMessage("user", "hello there, friend")]
REMEMBER = ToolSpec(
    name="remember",
    description="Store a fact about the user.",
    parameters={"type": "object", "properties": {"fact": {"type": "string"}}, "required": ["fact"]},
)
MOOD_SCHEMA = {"type": "object", "properties": {"mood": {"type": "string"}}, "required": ["mood"]}

Chat = OpenAIChat | AnthropicChat


class Sleeps(list[float]):
    """Stands in for asyncio.sleep and records the delays asked for."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
async def fake() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as server:
        yield server


@asynccontextmanager
async def chat(provider: str, fake: FakeLLM, **options: Any) -> AsyncIterator[Chat]:
    """An adapter for the provider pointed at the fake; closed on exit."""
    client: Chat
    if provider == "openai":
        client = OpenAIChat("gpt-fake", fake.openai_base_url, KEY, **options)
    else:
        client = AnthropicChat("claude-fake", fake.anthropic_base_url, KEY, **options)
    try:
        yield client
    finally:
        await client.aclose()


both = pytest.mark.parametrize("provider", ["openai", "anthropic"])


def closed_port() -> int:
    """A local port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- plain replies -----------------------------------------------------------


async def test_openai_plain_reply_and_usage(fake: FakeLLM) -> None:
    fake.enqueue("Hi! How are you today?")
    async with chat("openai", fake) as llm:
        reply = await llm.complete(CompletionRequest(HELLO, system=[SystemBlock("You are mnemo.")], max_tokens=50))
    assert reply.text == "Hi! How are you today?"
    assert reply.tool_calls == ()
    assert reply.model == "gpt-fake"
    assert reply.usage.input_tokens == count_tokens("You are mnemo.\nhello there, friend") > 0
    assert reply.usage.output_tokens == count_tokens("Hi! How are you today?")
    body = fake.last_request.json
    assert body["messages"] == [
        {"role": "system", "content": "You are mnemo."},
        {"role": "user", "content": "hello there, friend"},
    ]
    assert body["max_tokens"] == 50 and "tools" not in body and "response_format" not in body
    assert fake.last_request.headers["authorization"] == f"Bearer {KEY}"


async def test_anthropic_plain_reply_and_usage(fake: FakeLLM) -> None:
    fake.enqueue("Hello from claude")
    async with chat("anthropic", fake) as llm:
        reply = await llm.complete(CompletionRequest(HELLO, system=[SystemBlock("You are mnemo.")], max_tokens=50))
    assert reply.text == "Hello from claude"
    assert reply.model == "claude-fake"
    assert reply.usage.input_tokens == count_tokens("You are mnemo.\nhello there, friend") > 0
    assert reply.usage.output_tokens == count_tokens("Hello from claude")
    assert (reply.usage.cache_read_tokens, reply.usage.cache_write_tokens) == (0, 0)
    body = fake.last_request.json
    assert body["messages"] == [{"role": "user", "content": "hello there, friend"}]
    assert body["max_tokens"] == 50 and "tools" not in body


async def test_openai_puts_stable_system_blocks_first_in_one_message(fake: FakeLLM) -> None:
    system = [SystemBlock("persona"), SystemBlock("it is 9:00", stable=False), SystemBlock("rules")]
    async with chat("openai", fake) as llm:
        await llm.complete(CompletionRequest(HELLO, system=system))
    first = fake.last_request.json["messages"][0]
    assert first == {"role": "system", "content": "persona\n\nrules\n\nit is 9:00"}


async def test_anthropic_caches_up_to_the_last_stable_block_only(fake: FakeLLM) -> None:
    system = [SystemBlock("persona"), SystemBlock("it is 9:00", stable=False), SystemBlock("rules")]
    async with chat("anthropic", fake) as llm:
        await llm.complete(CompletionRequest(HELLO, system=system))
    assert fake.last_request.json["system"] == [
        {"type": "text", "text": "persona"},
        {"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "it is 9:00"},
    ]


# --- tool calls ----------------------------------------------------------------


async def test_openai_tool_call_round_trip(fake: FakeLLM) -> None:
    fake.enqueue_tool_call("remember", {"fact": "likes tea"})
    fake.enqueue("Noted: you like tea.")
    async with chat("openai", fake) as llm:
        asked = await llm.complete(CompletionRequest(HELLO, tools=[REMEMBER]))
        [call] = asked.tool_calls
        assert (call.name, call.arguments) == ("remember", {"fact": "likes tea"})
        history = [
            *HELLO,
            ChatMessage("assistant", tool_calls=asked.tool_calls),
            ChatMessage("tool", "stored", tool_call_id=call.id),
        ]
        final = await llm.complete(CompletionRequest(history, tools=[REMEMBER]))
    assert final.text == "Noted: you like tea." and final.tool_calls == ()
    first, second = (r.json for r in fake.requests)
    assert first["tools"] == [
        {"type": "function", "function": {"name": "remember", "description": REMEMBER.description,
                                          "parameters": REMEMBER.parameters}}
    ]  # fmt: skip
    assistant, tool = second["messages"][1:]
    assert assistant["role"] == "assistant"
    assert assistant["tool_calls"] == [
        {"id": call.id, "type": "function", "function": {"name": "remember", "arguments": '{"fact": "likes tea"}'}}
    ]
    assert tool == {"role": "tool", "tool_call_id": call.id, "content": "stored"}


async def test_anthropic_tool_call_round_trip_merges_tool_results(fake: FakeLLM) -> None:
    fake.enqueue_tool_calls([("remember", {"fact": "likes tea"}), ("remember", {"fact": "has a cat"})])
    fake.enqueue("Noted both.")
    async with chat("anthropic", fake) as llm:
        asked = await llm.complete(CompletionRequest(HELLO, tools=[REMEMBER]))
        tea, cat = asked.tool_calls
        assert [c.arguments["fact"] for c in asked.tool_calls] == ["likes tea", "has a cat"]
        history = [
            *HELLO,
            ChatMessage("assistant", tool_calls=asked.tool_calls),
            ChatMessage("tool", "stored tea", tool_call_id=tea.id),
            ChatMessage("tool", "stored cat", tool_call_id=cat.id),
        ]
        final = await llm.complete(CompletionRequest(history, tools=[REMEMBER]))
    assert final.text == "Noted both."
    first, second = (r.json for r in fake.requests)
    assert first["tools"] == [
        {"name": "remember", "description": REMEMBER.description, "input_schema": REMEMBER.parameters}
    ]
    assert second["messages"][1:] == [
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": tea.id, "name": "remember", "input": {"fact": "likes tea"}},
            {"type": "tool_use", "id": cat.id, "name": "remember", "input": {"fact": "has a cat"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tea.id, "content": "stored tea"},
            {"type": "tool_result", "tool_use_id": cat.id, "content": "stored cat"},
        ]},
    ]  # fmt: skip


# --- retries and error mapping -------------------------------------------------


@both
async def test_429_is_retried_after_the_servers_retry_after(fake: FakeLLM, provider: str) -> None:
    fake.enqueue_error(429, retry_after=7)
    fake.enqueue("finally")
    sleeps = Sleeps()
    async with chat(provider, fake, sleep=sleeps) as llm:
        reply = await llm.complete(CompletionRequest(HELLO))
    assert reply.text == "finally"
    assert len(fake.requests) == 2
    assert sleeps == [7.0]


@both
async def test_retry_after_is_capped_at_30_seconds(fake: FakeLLM, provider: str) -> None:
    fake.enqueue_error(429, retry_after=600)
    sleeps = Sleeps()
    async with chat(provider, fake, sleep=sleeps) as llm:
        await llm.complete(CompletionRequest(HELLO))
    assert sleeps == [30.0]


@both
async def test_persistent_429_raises_rate_limited(fake: FakeLLM, provider: str) -> None:
    for _ in range(2):
        fake.enqueue_error(429)
    async with chat(provider, fake, attempts=2, sleep=Sleeps()) as llm:
        with pytest.raises(LLMRateLimited, match="429"):
            await llm.complete(CompletionRequest(HELLO))
    assert len(fake.requests) == 2


@both
async def test_500_three_times_then_success(fake: FakeLLM, provider: str) -> None:
    for _ in range(3):
        fake.enqueue_error(500, "boom")
    fake.enqueue("recovered")
    sleeps = Sleeps()
    async with chat(provider, fake, sleep=sleeps) as llm:
        reply = await llm.complete(CompletionRequest(HELLO))
    assert reply.text == "recovered"
    assert len(fake.requests) == 4
    assert sleeps == backoff_delays(4)


@both
async def test_persistent_503_raises_unavailable_after_all_attempts(fake: FakeLLM, provider: str) -> None:
    fake.responder = lambda body: Reply(status=503)
    async with chat(provider, fake, attempts=3, sleep=Sleeps()) as llm:
        with pytest.raises(LLMUnavailable, match="503") as raised:
            await llm.complete(CompletionRequest(HELLO))
    assert len(fake.requests) == 3
    assert raised.value.__cause__ is not None


@both
async def test_401_is_rejected_without_retry_and_never_shows_the_key(fake: FakeLLM, provider: str) -> None:
    fake.enqueue_error(401, f"Incorrect API key provided: {KEY}")
    sleeps = Sleeps()
    async with chat(provider, fake, sleep=sleeps) as llm:
        with pytest.raises(LLMRejected) as raised:
            await llm.complete(CompletionRequest(HELLO))
    message = str(raised.value)
    assert "401" in message and llm.model in message and f"127.0.0.1:{fake.port}" in message
    assert KEY not in message
    assert len(fake.requests) == 1 and sleeps == []


@both
async def test_timeout_is_retried(fake: FakeLLM, provider: str) -> None:
    fake.enqueue_delay(3, then="too late")
    fake.enqueue("in time")
    sleeps = Sleeps()
    async with chat(provider, fake, timeout=0.2, sleep=sleeps) as llm:
        reply = await llm.complete(CompletionRequest(HELLO))
    assert reply.text == "in time"
    assert len(fake.requests) == 2 and sleeps == backoff_delays(4)[:1]


# --- JSON replies ----------------------------------------------------------------


async def test_openai_asks_for_json_schema_output(fake: FakeLLM) -> None:
    fake.enqueue('{"mood": "calm"}')
    async with chat("openai", fake) as llm:
        reply = await llm.complete(CompletionRequest(HELLO, json_schema=MOOD_SCHEMA))
    assert reply.json() == {"mood": "calm"}
    assert fake.last_request.json["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": MOOD_SCHEMA},
    }


async def test_openai_falls_back_to_json_object_when_json_schema_is_refused(fake: FakeLLM) -> None:
    fake.enqueue_error(400, "invalid response_format type: json_schema")
    fake.enqueue('{"mood": "calm"}')
    sleeps = Sleeps()
    async with chat("openai", fake, sleep=sleeps) as llm:
        reply = await llm.complete(CompletionRequest(HELLO, system=[SystemBlock("You are mnemo.")],
                                                     json_schema=MOOD_SCHEMA))
    assert reply.json() == {"mood": "calm"}
    assert len(fake.requests) == 2 and sleeps == []
    retry = fake.last_request.json
    assert retry["response_format"] == {"type": "json_object"}
    system = retry["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You are mnemo.")
    assert json.dumps(MOOD_SCHEMA) in system["content"]


async def test_openai_other_400_is_not_retried_as_json_object(fake: FakeLLM) -> None:
    fake.enqueue_error(400, "context length exceeded")
    async with chat("openai", fake) as llm:
        with pytest.raises(LLMRejected, match="400"):
            await llm.complete(CompletionRequest(HELLO, json_schema=MOOD_SCHEMA))
    assert len(fake.requests) == 1


async def test_anthropic_asks_for_json_in_the_system_prompt(fake: FakeLLM) -> None:
    fake.enqueue('```json\n{"mood": "calm"}\n```')
    async with chat("anthropic", fake) as llm:
        reply = await llm.complete(CompletionRequest(HELLO, system=[SystemBlock("You are mnemo.")],
                                                     json_schema=MOOD_SCHEMA))
    assert reply.json() == {"mood": "calm"}
    body = fake.last_request.json
    assert "response_format" not in body
    persona, instruction = body["system"]
    assert persona["cache_control"] == {"type": "ephemeral"}
    assert json.dumps(MOOD_SCHEMA) in instruction["text"] and "cache_control" not in instruction


# --- ping, factory -----------------------------------------------------------------


@both
async def test_ping_lists_models(fake: FakeLLM, provider: str) -> None:
    async with chat(provider, fake) as llm:
        await llm.ping()


async def test_ping_against_a_closed_port_is_unavailable() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    for llm in (OpenAIChat("m", f"{url}/v1", None, sleep=Sleeps()), AnthropicChat("m", url, KEY, sleep=Sleeps())):
        try:
            with pytest.raises(LLMUnavailable, match="cannot reach"):
                await llm.ping()
        finally:
            await llm.aclose()


async def test_make_llm_builds_each_provider_and_refuses_unknown_ones() -> None:
    openai_llm = make_llm("openai", "llama3", "http://127.0.0.1:11434/v1", None, 5.0)
    anthropic_llm = make_llm("anthropic", "claude-x", None, KEY, 5.0)
    assert isinstance(openai_llm, OpenAIChat) and isinstance(anthropic_llm, AnthropicChat)
    await openai_llm.aclose()
    await anthropic_llm.aclose()
    with pytest.raises(ConfigError, match="Unknown LLM provider 'gemini'"):
        make_llm("gemini", "m", None, None, 5.0)
    with pytest.raises(ConfigError, match="API key"):
        make_llm("anthropic", "claude-x", None, None, 5.0)



# --- streaming (on_text) --------------------------------------------------------------------------------


class Seen(list[str]):
    """An on_text that records the text so far each time it is called."""

    async def __call__(self, text: str) -> None:
        self.append(text)


@both
async def test_a_streamed_reply_hands_over_the_growing_text_and_ends_as_the_same_completion(
    fake: FakeLLM, provider: str,
) -> None:
    fake.enqueue("Schön, dass du wieder da bist – erzähl!")
    seen = Seen()
    async with chat(provider, fake) as llm:
        result = await llm.complete(CompletionRequest(HELLO, on_text=seen))
    assert fake.last_request.json["stream"] is True
    assert result.text == "Schön, dass du wieder da bist – erzähl!"
    assert len(seen) > 2 and seen[-1] == result.text
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(seen))  # the whole text so far
    assert result.tool_calls == ()


@both
async def test_streamed_tool_calls_are_put_together_and_their_text_is_not_forwarded_after_they_start(
    fake: FakeLLM, provider: str,
) -> None:
    fake.enqueue_tool_calls([("remember", {"fact": "plays the cello"}), ("remember", {"fact": "lives in Köln"})],
                            text="Moment")
    seen = Seen()
    async with chat(provider, fake) as llm:
        result = await llm.complete(CompletionRequest(HELLO, tools=[REMEMBER], on_text=seen))
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        ("remember", {"fact": "plays the cello"}), ("remember", {"fact": "lives in Köln"})]
    assert all(c.id for c in result.tool_calls) and len({c.id for c in result.tool_calls}) == 2
    assert result.text == "Moment" and seen == ["Moment"]


async def test_openai_streaming_reports_usage(fake: FakeLLM) -> None:
    fake.enqueue("ok then")
    async with chat("openai", fake) as llm:
        result = await llm.complete(CompletionRequest(HELLO, on_text=Seen()))
    assert fake.last_request.json["stream_options"] == {"include_usage": True}
    assert result.usage.output_tokens == count_tokens("ok then") and result.usage.input_tokens > 0


@both
async def test_a_failed_stream_is_retried_from_the_start(fake: FakeLLM, provider: str) -> None:
    fake.enqueue_error(503)
    fake.enqueue("Jetzt aber.")
    seen, sleeps = Seen(), Sleeps()
    async with chat(provider, fake, sleep=sleeps) as llm:
        result = await llm.complete(CompletionRequest(HELLO, on_text=seen))
    assert result.text == "Jetzt aber." and seen[-1] == "Jetzt aber." and len(sleeps) == 1


# --- an OpenAI-compatible server that answers garbage --------------------------


@asynccontextmanager
async def answering(body: str, content_type: str = "application/json") -> AsyncIterator[tuple[str, list[int]]]:
    """A server whose /v1/chat/completions always answers `body` with 200; its URL and a count of the requests."""
    seen: list[int] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(1)
        return web.Response(text=body, content_type=content_type)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    port = closed_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("body", ["<html>502 Bad Gateway</html>", "[1, 2]", '{"choices": "none"}',
                                  '{"choices": [{"message": 7}]}', '{"choices": []}', ""])
async def test_an_answer_that_is_no_chat_completion_is_bad_output_and_not_tried_again(body: str) -> None:
    async with answering(body) as (url, seen):
        llm = OpenAIChat("m", url, KEY, sleep=Sleeps())
        try:
            with pytest.raises(LLMBadOutput) as raised:
                await llm.complete(CompletionRequest(HELLO))
        finally:
            await llm.aclose()
    assert seen == [1] and KEY not in str(raised.value)


async def test_odd_fields_of_a_chat_completion_are_read_as_missing() -> None:
    odd = {"model": 3, "usage": {"prompt_tokens": "many", "completion_tokens": True},
           "choices": [{"message": {"content": "Hallo!", "tool_calls": [
               {"id": "c1", "type": "function", "function": "remember"},  # not an object: not a call
               {"id": "c2", "type": "function", "function": {"name": "remember", "arguments": '{"fact": "x"}'}}]}}]}
    async with answering(json.dumps(odd)) as (url, _seen):
        llm = OpenAIChat("m", url, KEY, sleep=Sleeps())
        try:
            reply = await llm.complete(CompletionRequest(HELLO))
        finally:
            await llm.aclose()
    assert (reply.text, reply.model, reply.usage.input_tokens, reply.usage.output_tokens) == ("Hallo!", "m", 0, 0)
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("c2", "remember", {"fact": "x"})]


@pytest.mark.parametrize("events", [
    'data: {"choices": [{"delta": {"content": "Hal"}}]}\n\ndata: not json\n\n',
    'data: {"choices": [{"delta": {"content": "Hal"}}]}\n\ndata: {"error": {"message": "overloaded"}}\n\n',
    'data: [1]\n\n',
    ": keep-alive\n\nevent: ping\n\ndata: [DONE]\n\n",  # no choice at all
])

async def test_a_stream_that_turns_to_garbage_is_bad_output(events: str) -> None:
    shown: list[str] = []

    async def on_text(text: str) -> None:
        shown.append(text)

    async with answering(events, "text/event-stream") as (url, seen):
        llm = OpenAIChat("m", url, KEY, sleep=Sleeps())
        try:
            with pytest.raises(LLMBadOutput):
                await llm.complete(CompletionRequest(HELLO, on_text=on_text))
        finally:
            await llm.aclose()
    assert seen == [1] and shown in ([], ["Hal"])


async def test_a_streamed_tool_call_with_an_odd_index_is_put_together_under_the_first() -> None:
    events = ('data: {"choices": [{"delta": {"tool_calls": [{"index": "x", "id": "c1", "function": {"name": "remember",'
              ' "arguments": "{\\"fact\\": \\"Tee\\"}"}}]}}]}\n\ndata: [DONE]\n\n')

    async def on_text(text: str) -> None:
        raise AssertionError(text)

    async with answering(events, "text/event-stream") as (url, _seen):
        llm = OpenAIChat("m", url, KEY, sleep=Sleeps())
        try:
            reply = await llm.complete(CompletionRequest(HELLO, on_text=on_text))
        finally:
            await llm.aclose()
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("c1", "remember", {"fact": "Tee"})]
