"""Issue 52's one way in: what a message brings as one list of parts, each the person's own words or someone else's;
the steps that decide from the person's words read only their own (`Turn.intake.own`), the crisis check every part."""
from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.conversation.engine import Incoming
from bot.conversation.intake import Part, intake_of
from bot.exchange import Attachment, Quoted
from memory.store import MemoryStore
from scheduler.away import STATE_KEY
from tests.engine_kit import make_engine
from tests.fakes.llm import Call, ScriptedLLM
from tests.test_engine_seams import Clock

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=ZoneInfo("Europe/Berlin"))
DOC = Attachment("document", b"x", "text/plain", 1, "brief.txt")


def test_each_part_says_where_it_came_from_and_whether_it_is_the_persons() -> None:
    assert intake_of(Incoming("anna", "ja"), False).parts == (Part("ja", "typed", True),)
    forwarded = intake_of(Incoming("anna", "ja", forwarded=True), False)
    assert forwarded.parts == (Part("ja", "forward", False),) and forwarded.own == "" and forwarded.forwarded
    caption = intake_of(Incoming("anna", "lies mal", attachment=DOC), False, document="Lieber Ben, …")
    assert caption.parts == (Part("lies mal", "caption", True), Part("Lieber Ben, …", "document", False))
    assert caption.own == "lies mal"
    assert intake_of(Incoming("anna", "ich gehe jetzt"), False, transcript=True).parts[0].source == "transcript"
    group = intake_of(Incoming("tg:group:-1", "Anna: ja", sender="tg:1"), True)
    assert group.own == "ja"  # the name the channel puts in front is no word of hers


def test_a_quoted_message_is_the_persons_only_when_they_wrote_it_in_a_private_chat() -> None:
    own = intake_of(Incoming("anna", "das meine ich noch", quoted=Quoted("mir geht es schlecht", False)), False)
    assert own.parts[1] == Part("mir geht es schlecht", "quoted", True) and own.own == "das meine ich noch"
    companion = intake_of(Incoming("anna", "hm", quoted=Quoted("Wie geht es dir?", True)), False)
    member = intake_of(Incoming("tg:group:-1", "Anna: hm", quoted=Quoted("Ben: egal", False)), True)
    assert [p.text for p in companion.to_check()] == ["hm"] and [p.text for p in member.to_check()] == ["hm"]
    assert [p.text for p in own.to_check()] == ["das meine ich noch", "mir geht es schlecht"]


def judge_counting() -> tuple[ScriptedLLM, list[str]]:
    """A background model that counts the correction judge's and the rule proposer's calls."""
    llm, asked = ScriptedLLM("background"), []

    def answer(call: Call) -> str:
        props = (call.json_schema or {}).get("properties", {})
        if "verdicts" in props:
            asked.append("judge")
            return json.dumps({"verdicts": []})
        if "rule" in props:
            asked.append("rule")
            return json.dumps({"rule": ""})
        return json.dumps({"facts": [], "content": [], "profile": []})

    llm.responder = answer
    return llm, asked


async def test_forwarded_words_object_to_nothing_announce_no_absence_and_ask_no_why(store: MemoryStore) -> None:
    chat, (background, asked) = ScriptedLLM("chat"), judge_counting()
    engine = make_engine(store, chat, clock=Clock(NOON), background=background)
    scope = await engine.scope_for("anna")
    for text in ("Das stimmt nicht mehr, ich wohne nicht mehr in Köln.", "Ab Montag bin ich eine Woche im Urlaub.",
                 "Woher weißt du das?"):
        chat.enqueue("Was meinst du dazu?")
        reply = await engine.handle(Incoming("anna", text, forwarded=True))
        assert reply is not None and reply.bubbles == ("Was meinst du dazu?",), text
    assert asked == [] and await store.state.get(scope, STATE_KEY) is None
    chat.enqueue("Gute Reise!")  # the same words as her own do count
    await engine.handle(Incoming("anna", "Ab Montag bin ich eine Woche im Urlaub."))
    assert await store.state.get(scope, STATE_KEY) is not None
    await engine.close()
