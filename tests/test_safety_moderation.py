"""The optional moderation layer against a fake OpenAI moderations / Llama Guard server on 127.0.0.1: flagged, not
flagged, too slow, failing, unreadable; its failures are counted and never hold the help line back."""
from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

import pytest

from bot.conversation.crisis import LayeredDetector, PatternDetector
from bot.conversation.moderation import (
    ModerationConfig,
    ModerationDetector,
    ModerationKind,
    ModerationUnreadable,
    llama_guard_flags,
    openai_flags,
)
from bot.settings import Settings
from tests.fakes.moderation_api import FakeModeration

QUIET_WORDS = "Mir geht es heute wirklich nicht gut, ich mag nicht mehr reden."  # no pattern matches this


@pytest.fixture
async def service() -> AsyncIterator[FakeModeration]:
    async with FakeModeration(lambda text: "nicht mehr reden" in text) as fake:
        yield fake


def detector(service: FakeModeration, failures: Counter[str], kind: ModerationKind = "openai",
             timeout: float = 2.0) -> ModerationDetector:
    async def count(name: str) -> None:
        failures[name] += 1

    return ModerationDetector(ModerationConfig(service.base_url, kind, "omni-moderation-latest", "sk-test", timeout),
                              count)


@pytest.mark.parametrize("kind", ["openai", "llama-guard"])
async def test_a_flagged_text_is_a_crisis_and_an_unflagged_one_is_not(service: FakeModeration,
                                                                     kind: ModerationKind) -> None:
    failures: Counter[str] = Counter()
    moderation = detector(service, failures, kind)
    try:
        assert await moderation.crisis(QUIET_WORDS)
        assert not await moderation.crisis("Heute gibt es Spaghetti.")
    finally:
        await moderation.aclose()
    path, headers, body = service.requests[0]
    assert path == ("/v1/moderations" if kind == "openai" else "/v1/chat/completions")
    assert headers["authorization"] == "Bearer sk-test"
    assert (body["input"] if kind == "openai" else body["messages"][0]["content"]) == QUIET_WORDS
    assert failures == Counter()


async def test_the_layers_say_yes_when_only_the_service_does(service: FakeModeration) -> None:
    failures: Counter[str] = Counter()
    moderation = detector(service, failures)
    layered = LayeredDetector((PatternDetector(), moderation))
    try:
        assert not await PatternDetector().crisis(QUIET_WORDS)
        assert await layered.crisis(QUIET_WORDS)
        asked = len(service.requests)
        assert await layered.crisis("Ich will nicht mehr leben.")  # the patterns decide; the service is not asked
        assert len(service.requests) == asked
    finally:
        await moderation.aclose()


async def test_a_slow_service_times_out_and_the_local_verdict_stands(service: FakeModeration) -> None:
    failures: Counter[str] = Counter()
    service.delay = 1.0
    moderation = detector(service, failures, timeout=0.2)
    layered = LayeredDetector((PatternDetector(), moderation))
    try:
        assert not await moderation.crisis(QUIET_WORDS)  # too slow: no yes from it
        assert await layered.crisis("Ich bringe mich um.")  # the patterns' yes does not wait for it
    finally:
        await moderation.aclose()
    assert failures == Counter({"moderation.timeout": 1})


@pytest.mark.parametrize("status", [500, 401])
async def test_a_failing_service_is_counted_and_logged(service: FakeModeration, status: int,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    failures: Counter[str] = Counter()
    service.status = status
    moderation = detector(service, failures)
    try:
        assert not await moderation.crisis(QUIET_WORDS)
    finally:
        await moderation.aclose()
    assert failures == Counter({"moderation.error": 1})
    assert "moderation service" in caplog.text and str(status) in caplog.text


async def test_an_unreadable_answer_is_an_error_not_a_no(service: FakeModeration) -> None:
    failures: Counter[str] = Counter()
    service.body = {"unexpected": True}
    moderation = detector(service, failures)
    try:
        assert not await moderation.crisis(QUIET_WORDS)
    finally:
        await moderation.aclose()
    assert failures == Counter({"moderation.error": 1})


async def test_an_unreachable_service_is_counted() -> None:
    failures: Counter[str] = Counter()

    async def count(name: str) -> None:
        failures[name] += 1

    moderation = ModerationDetector(ModerationConfig("http://127.0.0.1:9/v1"), count)  # nothing listens on port 9
    try:
        assert not await moderation.crisis(QUIET_WORDS)
    finally:
        await moderation.aclose()
    assert failures == Counter({"moderation.error": 1})


def test_the_answers_are_read_by_their_kind() -> None:
    def openai(**categories: bool) -> dict[str, object]:
        return {"results": [{"flagged": any(categories.values()),
                             "categories": {k.replace("_", "-").replace("--", "/"): v for k, v in categories.items()}}]}

    assert openai_flags({"results": [{"categories": {"self-harm/intent": True}}]})
    assert openai_flags({"results": [{"categories": {"violence": True}}]})
    assert not openai_flags({"results": [{"categories": {"hate": True, "self-harm": False}}]})
    assert not openai_flags(openai(harassment=True))
    assert llama_guard_flags({"choices": [{"message": {"content": "unsafe\nS11"}}]})
    assert llama_guard_flags({"choices": [{"message": {"content": "unsafe\nS1,S10"}}]})
    assert not llama_guard_flags({"choices": [{"message": {"content": "unsafe\nS10"}}]})
    assert not llama_guard_flags({"choices": [{"message": {"content": "safe"}}]})
    with pytest.raises(ModerationUnreadable):
        llama_guard_flags({"choices": [{"message": {"content": "I cannot help with that."}}]})
    with pytest.raises(ModerationUnreadable):
        openai_flags({"results": []})


def test_the_moderation_settings_are_off_by_default_and_read_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).moderation_url is None  # type: ignore[call-arg]
    monkeypatch.setenv("MNEMO_MODERATION_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("MNEMO_MODERATION_KIND", "llama-guard")
    monkeypatch.setenv("MNEMO_MODERATION_MODEL", "llama-guard3")
    monkeypatch.setenv("MNEMO_MODERATION_API_KEY", "secret-key-1")
    monkeypatch.setenv("MNEMO_MODERATION_TIMEOUT", "1.5")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (settings.moderation_url, settings.moderation_kind, settings.moderation_model,
            settings.moderation_timeout) == ("http://127.0.0.1:11434/v1", "llama-guard", "llama-guard3", 1.5)
    assert "secret-key-1" in settings.secrets()  # masked in the logs
