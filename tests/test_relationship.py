"""Persona and relationship: the cap rules as a table, a capped reflection that /undo reverts, companions apart."""
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.admin.companions import CompanionSpec, create
from bot.cli import main
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig, Incoming
from bot.conversation.prompt import PromptContext, build_prompt, own_questions
from bot.errors import ConfigError
from bot.llm.writer import LLMWriter
from memory.account.companions import Companion
from memory.ledgers.undo import undo_latest
from memory.models import Message, Scope
from memory.records.relationship import Logged, Relationship
from memory.store import MemoryStore
from scheduler.checkin import gather
from scheduler.planner import decide_checkin
from scheduler.reflection import reflect
from scheduler.relationship_rules import Proposal, apply, parse_proposal, silence_for
from tests.fakes.llm import Call, ScriptedLLM

pytestmark = pytest.mark.both_backends("relationship rows and their undo")

BERLIN = ZoneInfo("Europe/Berlin")
DAY = 86400.0
T0 = 1_780_000_000.0
NOW = T0 + 30 * DAY
BASE = Relationship(familiarity=20, trust=20, affection=20, playfulness=20, stage_changed_at=T0)
FRIEND = replace(BASE, stage="friend", familiarity=40, trust=40, affection=40)

# (case, state, asked deltas, wish, days since the last stage change,
#  expected stage, expected values, expected changes as (value, asked, applied, rule codes))
CASES: list[tuple[str, Relationship, dict[str, int], str, float, str, dict[str, int], list[tuple[Any, ...]]]] = [
    ("within the cap", BASE, {"trust": 3}, "friendship", 30, "acquaintance", {"trust": 23},
     [("trust", 3, 3, ())]),
    ("capped up", BASE, {"trust": 20}, "friendship", 30, "acquaintance", {"trust": 25},
     [("trust", 20, 5, ("cap",))]),
    ("capped down", BASE, {"affection": -12}, "friendship", 30, "acquaintance", {"affection": 15},
     [("affection", -12, -5, ("cap",))]),
    ("clamped at 100", replace(BASE, playfulness=98), {"playfulness": 4}, "friendship", 30, "acquaintance",
     {"playfulness": 100}, [("playfulness", 4, 2, ("clamp",))]),
    ("capped and clamped", replace(BASE, playfulness=97), {"playfulness": 20}, "friendship", 30, "acquaintance",
     {"playfulness": 100}, [("playfulness", 20, 3, ("cap", "clamp"))]),
    ("clamped at 0", replace(BASE, trust=2), {"trust": -5}, "friendship", 30, "acquaintance", {"trust": 0},
     [("trust", -5, -2, ("clamp",))]),
    ("up when the minimum values are reached", replace(BASE, familiarity=30, trust=28, affection=25),
     {"trust": 2}, "friendship", 30, "friend", {"trust": 30}, [("trust", 2, 2, ()), ("stage", 1, 1, ("up",))]),
    ("no step below the minimum", replace(BASE, familiarity=29, trust=30, affection=25), {"trust": 1},
     "friendship", 30, "acquaintance", {"trust": 31}, [("trust", 1, 1, ())]),
    ("one step per run", replace(BASE, familiarity=95, trust=95, affection=95), {}, "confidant", 30, "friend", {},
     [("stage", 1, 1, ("up",))]),
    ("frozen for 7 days", replace(BASE, familiarity=30, trust=30, affection=30), {}, "friendship", 6.9,
     "acquaintance", {}, [("stage", 1, 0, ("up", "freeze"))]),
    ("free again after 7 days", replace(BASE, familiarity=30, trust=30, affection=30), {}, "friendship", 7,
     "friend", {}, [("stage", 1, 1, ("up",))]),
    ("hysteresis holds the stage just below the threshold", replace(FRIEND, trust=30), {"trust": -5},
     "friendship", 30, "friend", {"trust": 25}, [("trust", -5, -5, ())]),
    ("hysteresis: down 10 below the threshold", replace(FRIEND, trust=22), {"trust": -3}, "friendship", 30,
     "acquaintance", {"trust": 19}, [("trust", -3, -3, ()), ("stage", -1, -1, ("down",))]),
    ("down is frozen too", replace(FRIEND, trust=22), {"trust": -3}, "friendship", 2, "friend", {"trust": 19},
     [("trust", -3, -3, ()), ("stage", -1, 0, ("down", "freeze"))]),
    ("the creation limit: acquaintance only", replace(BASE, familiarity=50, trust=50, affection=50), {},
     "acquaintance", 30, "acquaintance", {}, [("stage", 1, 0, ("up", "wish"))]),
    ("the creation limit: friendship stops at friend", replace(FRIEND, familiarity=70, trust=70, affection=70),
     {}, "friendship", 30, "friend", {}, [("stage", 1, 0, ("up", "wish"))]),
    ("a stage above the limit steps down, even when frozen", replace(FRIEND, stage="close_friend"), {},
     "friendship", 1, "friend", {}, [("stage", -1, -1, ("limit",))]),
]


@pytest.mark.parametrize("case, state, deltas, wish, days, stage, values, expected", CASES, ids=[c[0] for c in CASES])
def test_cap_rules(case: str, state: Relationship, deltas: dict[str, int], wish: str, days: float, stage: str,
                   values: dict[str, int], expected: list[tuple[Any, ...]]) -> None:
    state = replace(state, stage_changed_at=NOW - days * DAY)
    new, changes = apply(state, Proposal(deltas=deltas), NOW, wish)
    assert new.stage == stage
    for name in ("familiarity", "trust", "affection", "playfulness"):
        assert new.value(name) == values.get(name, state.value(name)), name
    assert [(c.value, c.asked, c.applied, tuple(code for code, _ in c.rules)) for c in changes] == expected
    moved = any(c.value == "stage" and c.applied for c in changes)
    assert new.stage_changed_at == (NOW if moved else state.stage_changed_at)


def test_reasons_name_the_rule_and_its_detail() -> None:
    _, changes = apply(replace(BASE, familiarity=30, trust=30, affection=30), Proposal({"trust": 20}), NOW - 25 * DAY,
                       "friendship")
    assert changes[0].reason == "capped at ±5"
    assert changes[1].reason.startswith("minimum values for 'friend' reached; stage frozen until 2026-")
    _, limited = apply(replace(FRIEND, familiarity=70, trust=70, affection=70), Proposal(), NOW, "friendship")
    assert limited[0].reason.endswith("stage limited by the wish 'friendship'")


def test_texts_keep_their_limits() -> None:
    state = replace(BASE, in_jokes=("Der Toaster",))
    proposal = Proposal(mood="  neugierig  ", intentions=tuple(f"Vorsatz {i}" for i in range(8)),
                        in_jokes=("der toaster", "Die Ente"), opinions=("Jazz ist unterschätzt",))
    new, _ = apply(state, proposal, NOW, "friendship")
    assert new.mood == "neugierig"
    assert new.intentions == tuple(f"Vorsatz {i}" for i in range(5))
    assert new.in_jokes == ("Der Toaster", "Die Ente")
    assert new.opinions == ("Jazz ist unterschätzt",)


def test_a_proposal_of_the_wrong_shape_is_an_error() -> None:
    assert parse_proposal({"changes": {"trust": 2.6, "respect": 3}}).deltas == {"trust": 3}
    for bad in ([], {"changes": {"trust": "viel"}}, {"changes": [1]}, {"intentions": "eins"}, {"mood": 3}):
        with pytest.raises(ValueError):
            parse_proposal(bad)


def test_silence_threshold_by_stage() -> None:
    assert [silence_for(s).total_seconds() / 3600 for s in ("acquaintance", "friend", "close_friend", "confidant")] \
        == [48, 36, 24, 12]


# --- a scripted reflection ---------------------------------------------------------------------------------------

def reflection_model(changes: dict[str, int], **extra: Any) -> ScriptedLLM:
    """A background model whose reflection proposes the given value changes."""
    llm = ScriptedLLM("background")

    def respond(call: Call) -> str:
        if "reflecting privately" in call.system[0].text:
            return json.dumps({"thoughts": ["Anna vertraut mir mehr."], "concern": "",
                               "relationship": {"changes": changes, "why": "Sie hat von ihrer Angst erzählt.",
                                                **extra}})
        return json.dumps({"facts": [], "content": [], "profile": []})

    llm.responder = respond
    return llm


@pytest.fixture
async def anna(store: MemoryStore) -> Scope:
    scope = await store.scope("mnemo", "anna")
    await store.messages.add(scope, "user", "Ich habe dir noch nie von meiner Flugangst erzählt.")
    await store.messages.add(scope, "assistant", "Danke, dass du mir das anvertraust.")
    return scope


async def test_a_reflection_asking_plus_20_trust_moves_it_by_5_logs_the_cap_and_undo_reverts_it(
    store: MemoryStore, anna: Scope,
) -> None:
    background = reflection_model({"trust": 20}, mood="zugewandt", intentions=["nach dem Flug fragen"])
    result = await reflect(store, LLMWriter(background), anna, force=True)
    assert result is not None and [(c.value, c.asked, c.applied) for c in result.changes] == [("trust", 20, 5)]
    assert "Your relationship with the person now:\nStage: acquaintance" in background.calls[0].prompt
    state = await store.relationships.get(anna)
    assert (state.trust, state.mood, state.intentions) == (15, "zugewandt", ("nach dem Flug fragen",))

    log = [e for e in await store.audit_log(anna) if e.item_type == "relationship"]
    trust = next(e for e in log if e.before and "trust" in e.before)
    assert trust.reason == "capped at ±5"
    assert trust.before == {"trust": 10}
    assert (trust.after["trust"], trust.after["asked"], trust.after["applied"]) == (15, 20, 5)
    assert len({e.processing_id for e in await store.audit_log(anna)}) == 1, "one reflection, one processing"

    commands = Commands(Engine(store, ScriptedLLM(), background, EngineConfig(relevance_floor=0.0)))
    undone = await commands.run("anna", "/undo")
    assert undone is not None and "Vertrauen 10 → 15" in undone.bubbles[0] and "auf ±5 begrenzt" in undone.bubbles[0]
    state = await store.relationships.get(anna)
    assert (state.trust, state.mood, state.intentions) == (10, "", ())
    assert await store.thoughts.latest(anna) == []
    assert await store.relationships.history(anna) == []


async def test_a_broken_relationship_part_stores_nothing(store: MemoryStore, anna: Scope) -> None:
    from scheduler.errors import BadModelOutput

    with pytest.raises(BadModelOutput):
        await reflect(store, LLMWriter(reflection_model({"trust": "sehr"})), anna, force=True)
    assert await store.thoughts.latest(anna) == []
    assert await store.audit_log(anna) == []


async def test_undo_takes_a_stage_step_back_with_its_date(store: MemoryStore, anna: Scope) -> None:
    start = replace(BASE, familiarity=30, trust=28, affection=25, stage_changed_at=NOW - 10 * DAY)
    await store.relationships.save(anna, start, [], "seed")
    await reflect(store, LLMWriter(reflection_model({"trust": 4})), anna, now=NOW, force=True)
    assert (await store.relationships.get(anna)).stage == "friend"
    await undo_latest(store, anna)
    back = await store.relationships.get(anna)
    assert (back.stage, back.trust, back.stage_changed_at) == ("acquaintance", 28, NOW - 10 * DAY)


# --- /relationship -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang, expected", [
    ("de", ["🤝 Wir sind: Bekannte (höchstens: Freunde)", "Vertrauen 15", "Stimmung: zugewandt",
            "Was ich mir vornehme:", "• nach dem Flug fragen", "Zuletzt geändert:",
            "Vertrauen 10 → 15 (+20 vorgeschlagen; auf ±5 begrenzt)"]),
    ("en", ["🤝 We are: acquaintances (at most: friends)", "trust 15", "Mood: zugewandt",
            "trust 10 → 15 (+20 proposed; capped at ±5)"]),
])
async def test_relationship_command_shows_state_and_recent_changes(
    store: MemoryStore, anna: Scope, lang: str, expected: list[str],
) -> None:
    commands = Commands(Engine(store, ScriptedLLM(), ScriptedLLM(), EngineConfig(language=lang, relevance_floor=0.0)))
    empty = await commands.run("anna", "/relationship")
    assert empty is not None and ("Noch keine Änderungen" in empty.bubbles[0] or "No changes yet" in empty.bubbles[0])
    await reflect(store, LLMWriter(reflection_model({"trust": 20}, mood="zugewandt",
                                                    intentions=["nach dem Flug fragen"])), anna, force=True)
    reply = await commands.run("anna", "/relationship")
    assert reply is not None
    for line in expected:
        assert line in reply.bubbles[0]


# --- companions --------------------------------------------------------------------------------------------------

ADA = Companion("ada", "Ada", 31, "witty", {"humour": 9}, "close_friendship", "You are Ada, dry and quick.")
BEN = Companion("ben", "Ben", None, "calm", {"care": 8}, "acquaintance", "You are Ben, calm and slow.")


@pytest.fixture
async def two(store: MemoryStore) -> AsyncIterator[tuple[Engine, Engine, ScriptedLLM, ScriptedLLM]]:
    await store.companions.add(ADA)
    await store.companions.add(BEN)
    background = ScriptedLLM()
    background.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    chat_a, chat_b = ScriptedLLM(), ScriptedLLM()
    ada = Engine(store, chat_a, background, EngineConfig(companion_id="ada", persona="IGNORED", relevance_floor=0.0))
    ben = Engine(store, chat_b, background, EngineConfig(companion_id="ben", relevance_floor=0.0))
    yield ada, ben, chat_a, chat_b
    await ada.close()
    await ben.close()


async def test_two_companions_of_one_user_share_nothing(store: MemoryStore, two: Any) -> None:
    ada, ben, chat_a, chat_b = two
    scope_a, scope_b = await ada.scope_for("anna"), await ben.scope_for("anna")
    assert scope_a.id != scope_b.id
    await store.notes.add(scope_a, "Anna hat einen Hund namens Bello")
    await store.messages.add(scope_a, "user", "Mein Hund Bello ist krank.")
    await reflect(store, LLMWriter(reflection_model({"trust": 4}, in_jokes=["Bello, der Sofakönig"])), scope_a,
                  force=True)

    await ada.handle(Incoming("anna", "Wie heißt mein Hund?"))
    await ben.handle(Incoming("anna", "Wie heißt mein Hund?"))
    await ada.drain()
    await ben.drain()
    seen_by_ada, seen_by_ben = chat_a.calls[0].prompt, chat_b.calls[0].prompt
    assert "Bello" in seen_by_ada and "You are Ada" in seen_by_ada and "IGNORED" not in seen_by_ada
    assert "Bello" not in seen_by_ben and "Ada" not in seen_by_ben and "Sofakönig" not in seen_by_ben
    assert "You are Ben" in seen_by_ben and "You are Ben" not in seen_by_ada
    greeting = await Commands(ada).run("anna", "/start")
    assert greeting is not None and greeting.bubbles[0].startswith("Hallo! Ich bin Ada.")
    assert (await store.relationships.get(scope_a)).trust == 14
    assert (await store.relationships.get(scope_b)).trust == 10
    assert not [h for h in await store.search(scope_b, "Bello", ("note", "message", "thought")) if "Bello" in h.text]
    assert await store.relationships.history(scope_b) == []
    reply = await Commands(ben).run("anna", "/relationship")
    assert reply is not None and "(höchstens: Bekannte)" in reply.bubbles[0] and "Noch keine" in reply.bubbles[0]


async def test_companion_personality_and_relationship_sit_in_the_stable_block(store: MemoryStore, two: Any) -> None:
    ada, _ben, chat_a, _chat_b = two
    chat_a.enqueue("Hey! Wie war dein Tag? Und hast du gut geschlafen?")
    await ada.handle(Incoming("anna", "Hallo"))
    await ada.handle(Incoming("anna", "Gut."))
    system, messages = chat_a.calls[-1].system, chat_a.calls[-1].messages
    stable, volatile = system[0], system[1]
    assert stable.stable and not volatile.stable
    assert stable.text.startswith("You are Ada, a personal companion")
    assert "Your personality (your core; it stays itself):\nYou are Ada, dry and quick." in stable.text
    assert "Stage: acquaintance (at most: close friend)" in stable.text
    assert "Not every reply ends with a question" in stable.text
    hint = messages[-1].content
    assert "Your own latest questions" in hint and "Wie war dein Tag?" in hint and "hast du gut geschlafen?" in hint
    assert "Wie war dein Tag?" not in stable.text


def test_prompt_without_a_companion_keeps_the_persona_and_a_crisis_drops_the_character() -> None:
    rel = replace(FRIEND, in_jokes=("die Ente",), mood="heiter")
    ctx = PromptContext(companion_name="Mnemo", language="de", user_text="hi", now_local=datetime(2026, 1, 1, 9),
                        persona="Sei freundlich.", relationship=rel)
    system, _ = build_prompt(ctx)
    assert "Your persona:\nSei freundlich." in system[0].text and 'in-joke: die Ente' in system[0].text
    assert "Stage: friend (at most: friend)" in system[0].text
    crisis, _ = build_prompt(replace(ctx, companion=ADA, crisis_notice="Ruf 112 an."))
    assert "Ente" not in crisis[0].text and "dry and quick" not in crisis[0].text and "heiter" not in crisis[0].text
    assert "Stage: friend." in crisis[0].text


def test_own_questions_come_from_the_latest_replies() -> None:
    when = datetime(2026, 1, 1, 9)
    window = [Message(1, "assistant", "Alt? Sehr alt?", when), Message(2, "user", "Was meinst du?", when),
              Message(3, "assistant", "Schön. Wie war's?", when), Message(4, "assistant", "Kommst du morgen?", when)]
    assert own_questions(window) == ["Sehr alt?", "Wie war's?", "Kommst du morgen?"]


# --- check-ins ---------------------------------------------------------------------------------------------------

async def test_the_silence_threshold_follows_the_stage_within_the_budget(store: MemoryStore) -> None:
    scope = await store.scope("mnemo", "anna")
    now = datetime(2026, 3, 2, 12, tzinfo=BERLIN).timestamp()
    await store.messages.add(scope, "user", "Bis bald", created_at=now - 13 * 3600)
    facts = await gather(store, scope, now, BERLIN)
    assert facts.silence_threshold == timedelta(hours=48)
    assert decide_checkin(facts).reason == "nothing to say"

    await store.relationships.save(scope, replace(BASE, stage="confidant"), [], "seed")
    facts = await gather(store, scope, now, BERLIN)
    assert facts.silence_threshold == timedelta(hours=12)
    assert decide_checkin(facts).reason == "silence"
    assert (await gather(store, scope, now, BERLIN, timedelta(hours=30))).silence_threshold == timedelta(hours=30)
    budget = replace(facts, last_proactive=facts.now - timedelta(hours=15))
    assert decide_checkin(budget).send is False, "the 20-hour budget still holds for the closest stage"


async def test_relationship_rows_follow_their_scope_on_export_and_delete(store: MemoryStore, anna: Scope) -> None:
    await store.relationships.save(anna, replace(BASE, trust=33), [Logged({"trust": 20}, {"trust": 33}, "test")], "p-1")
    assert (await store.export(anna))["relationships"][0]["trust"] == 33
    await store.delete_scope(anna)
    assert (await store.relationships.get(anna)).trust == 10


# --- creating a companion ------------------------------------------------------------------------------------------

async def test_creating_a_companion_asks_the_model_once_and_never_rewrites_it(store: MemoryStore) -> None:
    model = ScriptedLLM()
    model.enqueue("You are Ada. You tease kindly and hold your ground.")
    spec = CompanionSpec("ada", "Ada", 31, "witty", {"humour": 9, "directness": 7, "care": 6, "stubbornness": 4},
                         "close_friendship")
    made = await create(store, LLMWriter(model), spec)
    assert made.core == "You are Ada. You tease kindly and hold your ground."
    assert "humour: 9/10" in model.calls[0].prompt and "Template: witty" in model.calls[0].prompt
    with pytest.raises(ConfigError):
        await create(store, LLMWriter(model), spec)
    assert len(model.calls) == 1
    for bad in (replace(spec, id="x y"), replace(spec, template="grumpy"), replace(spec, wish="marriage"),
                replace(spec, sliders={**spec.sliders, "care": 11})):
        with pytest.raises(ConfigError):
            await create(store, LLMWriter(model), bad)
    assert [c.id for c in await store.companions.list()] == ["ada"]


def test_companion_list_from_the_shell(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    import asyncio

    from memory.search.embedder import make_embedder

    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path))

    async def seed() -> None:
        async with await MemoryStore.open(tmp_path, make_embedder()) as s:
            await s.companions.add(ADA)

    asyncio.run(seed())
    assert main(["--env-file", str(tmp_path / "none.env"), "companion", "list"]) == 0
    assert capsys.readouterr().out.strip() == "ada\tAda\twitty\tclose_friendship"
    with pytest.raises(SystemExit):
        main(["companion", "create", "--id", "x", "--name", "X", "--humour", "12"])


async def test_mnemo_companion_create_writes_the_personality_through_the_background_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    from bot.admin.companions import run_command
    from bot.cli import parse_args
    from bot.settings import Settings
    from tests.fakes.llm_api import FakeLLM

    async with FakeLLM() as fake:
        fake.enqueue("You are Ada. You tease kindly and hold your ground.")
        settings = Settings(_env_file=None, data_dir=tmp_path, chat_base_url=fake.openai_base_url,  # type: ignore[call-arg]
                            chat_model="fake-model", chat_api_key="test-key")
        args = parse_args(["companion", "create", "--id", "ada", "--name", "Ada", "--age", "31", "--template", "witty",
                           "--humour", "9", "--wish", "close_friendship"])
        assert await run_command(settings, args) == 0
        assert "humour: 9/10" in fake.last_request.prompt_text
        assert "You write the core personality" in fake.last_request.prompt_text
    out = capsys.readouterr().out
    assert "created ada (Ada); run it with MNEMO_COMPANION_ID=ada" in out
    assert "You are Ada. You tease kindly and hold your ground." in out
