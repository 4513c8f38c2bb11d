"""The outside view: a second model reads a generated transcript; chunks, samples, quotes and reports are checked."""
from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.admin.analysis import DEFAULT_QUESTIONS, analyse, complete_text, run_command
from bot.admin.analysis_transcripts import (
    CHUNK_CHARS,
    Conversation,
    Style,
    chunk_transcript,
    conversation_header,
    even_sample,
    filter_by_keywords,
    group_conversations,
    make_preview,
    message_line,
)
from bot.analysis_reports import annotate, list_reports
from bot.cli import parse_args
from bot.errors import LLMBadOutput
from bot.llm.port import ChatMessage, Completion, CompletionRequest
from memory import read_messages
from memory.models import Message
from memory.store import MemoryStore
from tests.engine_kit import settings_for
from tests.fakes.llm import ScriptedLLM

pytestmark = pytest.mark.both_backends("the analysis report's queries (a dialect branch)")

ZONE = ZoneInfo("Europe/Berlin")
DAY0 = datetime(2025, 3, 3, 19, 0, tzinfo=ZONE)
REAL = "Ehrlich gesagt glaube ich, du machst es dir da zu leicht."
INVENTED = "Ich werde dich niemals anlügen."
REAL_DATE = "2025-03-15"  # conversation 4: DAY0 + 12 days
LONG_EVENING = 6  # 40 messages of 3,900 characters: more than one chunk of 150,000


def generated() -> list[tuple[datetime, str, str, bool]]:
    """Ten conversations three days apart (four weeks), one proactive start, one long evening, one oversized message."""
    rows: list[tuple[datetime, str, str, bool]] = []
    for i in range(10):
        start = DAY0 + timedelta(days=3 * i)
        if i == LONG_EVENING:
            for k in range(40):
                role = "user" if k % 2 == 0 else "assistant"
                rows.append((start + timedelta(minutes=k), role, f"Langer Abend {k}: " + "bla " * 975, False))
            continue
        if i == 3:  # the companion speaks first
            rows += [(start, "assistant", "Wie war eigentlich der Termin beim Arzt?", True),
                     (start + timedelta(minutes=2), "user", "Gut, danke!", False)]
        else:
            rows += [(start, "user", f"Tag {i}: Ich habe heute zu lange gearbeitet.", False),
                     (start + timedelta(minutes=2), "assistant", "Das klingt anstrengend. Was hat dich Kraft gekostet?",
                      False)]
        user_text = {5: "Morgen muss ich zum Zahnarzt.", 7: "x" * 5000}.get(
            i, "Vielleicht sollte ich weniger schlafen.")
        rows.append((start + timedelta(minutes=5), "user", user_text, False))
        rows.append((start + timedelta(minutes=7), "assistant", REAL if i == 4 else "Das verstehe ich gut.", False))
    return rows


@pytest.fixture
async def transcript(store: MemoryStore) -> list[tuple[datetime, str, str, bool]]:
    scope = await store.scope("mnemo", "tg:42")
    rows = generated()
    for at, role, text, proactive in rows:
        await store.messages.add(scope, role, text, created_at=at.timestamp(), proactive=proactive, index=False)
    return rows


ANALYST = {"chat_model": "companion-7b", "language": "de", "timezone": "Europe/Berlin"}  # the settings' fields here


def msg(i: int, minutes: float, text: str = "hallo", role: str = "user") -> Message:
    return Message(i, role, text, datetime(2025, 1, 1, 8, tzinfo=UTC) + timedelta(minutes=minutes))


class BudgetLLM(ScriptedLLM):
    """The scripted analyst, also recording the output budget of each call."""

    def __init__(self) -> None:
        super().__init__("analyst-1")
        self.budgets: list[int] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        self.budgets.append(request.max_tokens)
        return await super().complete(request)


PART = f"## Widerspruch\nEr hält dagegen: «{REAL}» ({REAL_DATE})\nGegenbeleg: «{INVENTED}» ({REAL_DATE})"
FINAL = (f"## Starke Befunde\nWiderspricht ernsthaft (3 Teile): «{REAL.lower()}» ({REAL_DATE})\n"
         f"## Schwache Befunde\n«{INVENTED}» ({REAL_DATE})")


def analyst() -> BudgetLLM:
    llm = BudgetLLM()
    llm.responder = lambda call: FINAL if "<part_report" in call.prompt else PART
    return llm


def test_a_pause_over_six_hours_starts_a_new_conversation() -> None:
    convs = group_conversations([msg(1, 0), msg(2, 360), msg(3, 721), msg(4, 2000)])
    assert [[m.id for m in c.messages] for c in convs] == [[1, 2], [3], [4]]
    assert len(group_conversations([msg(1, 0), msg(2, 90)], timedelta(hours=1))) == 2


async def test_transcript_is_read_read_only_grouped_headed_and_marks_the_bot_speaking_first(
        transcript: list[Any], store: MemoryStore, tmp_path: Path) -> None:
    messages = read_messages(store.db.url or tmp_path / "mnemo.sqlite3", "mnemo", "tg:42", 0.0, 1e18)
    convs = group_conversations(messages)
    assert len(messages) == len(transcript) and len(convs) == 10
    style = Style(ZONE, "de", "companion-7b")
    assert conversation_header(convs[0], style) == (
        "=== 2025-03-03 „Tag 0: Ich habe heute zu…“ | Beginn 2025-03-03 19:00 | Modell companion-7b ===\n")
    assert message_line(convs[3].messages[0], style) == (
        "[2025-03-12 19:00] Begleiter (schreibt zuerst): Wie war eigentlich der Termin beim Arzt?\n")
    long_line = message_line(convs[7].messages[2], style)
    assert long_line.endswith("x [… gekürzt: 1000 Zeichen]\n") and long_line.count("x") == 4000


def test_chunks_end_exactly_at_the_limit_without_splitting_a_message() -> None:
    conv = Conversation(tuple(msg(i, i, f"Nachricht {i} " + "a" * 50) for i in range(6)))
    style = Style(ZONE)
    header, lines = conversation_header(conv, style), [message_line(m, style) for m in conv.messages]
    limit = len(header) + sum(len(line) for line in lines[:3])

    chunks = chunk_transcript([conv], style, limit)
    assert len(chunks[0]) == limit and all(len(c) <= limit for c in chunks)
    assert chunks[0] == header + "".join(lines[:3])
    continued = conversation_header(conv, style, continued=True)
    assert "(Fortsetzung)" in continued and all(c.startswith(continued) for c in chunks[1:])
    assert "".join(c.removeprefix(continued) for c in chunks[1:]) == "".join(lines[3:])

    one_less = chunk_transcript([conv], style, limit - 1)
    assert one_less[0] == header + "".join(lines[:2])  # the third message moves whole into the next chunk


async def test_the_default_limit_is_150000_characters(transcript: list[Any], store: MemoryStore, tmp_path: Path
                                                       ) -> None:
    convs = group_conversations(read_messages(store.db.url or tmp_path / "mnemo.sqlite3", "mnemo", "tg:42", 0.0, 1e18))
    chunks = chunk_transcript(convs, Style(ZONE, "de", "companion-7b"))
    assert CHUNK_CHARS == 150_000 and len(chunks) == 2
    assert 150_000 - 4_100 < len(chunks[0]) <= 150_000
    assert sum(c.count("\n[2025-") for c in chunks) == len(transcript)  # every message once, none split


def test_even_sample_takes_first_last_and_evenly_spaced() -> None:
    items = list(range(10))
    assert even_sample(items, 4) == [0, 3, 6, 9]
    assert even_sample(items, 2) == [0, 9]
    assert even_sample(items, 1) == [0]
    assert even_sample(items, 12) == items
    assert even_sample(list(range(101)), 5) == [0, 25, 50, 75, 100]


def test_keywords_keep_only_matching_conversations() -> None:
    convs = [Conversation((msg(1, 0, "Ich war beim Zahnarzt"),)), Conversation((msg(2, 500, "Nichts"),)),
             Conversation((msg(3, 900, "Arbeit"),))]
    assert filter_by_keywords(convs, ["zahnARZT", "arbeit"]) == [convs[0], convs[2]]
    assert filter_by_keywords(convs, []) == convs


def test_a_real_quote_is_verified_and_an_invented_one_is_not_found() -> None:
    messages = [msg(1, 0, "Ehrlich gesagt glaube ich,\n du machst es dir  da zu leicht.", "assistant")]
    text, checks = annotate(
        f"A «{REAL}» (2025-01-01) B «{INVENTED}» (2025-01-01) C «ehrlich GESAGT glaube» (2025-02-02)", messages, ZONE)
    assert [(c.verified, c.match) for c in checks] == [(True, "normalized"), (False, ""), (True, "normalized")]
    assert f"«{REAL}» (2025-01-01) [✓ verified]" in text
    assert f"«{INVENTED}» (2025-01-01) [✗ not found]" in text
    assert "(2025-02-02) [✓ verified, dated 2025-01-01]" in text


async def test_an_empty_answer_is_retried_with_a_larger_budget() -> None:
    llm = BudgetLLM()
    llm.enqueue("")
    llm.enqueue("Bericht")
    reply = await complete_text(llm, [ChatMessage("user", "x")], [], 4096)
    assert reply.text == "Bericht" and llm.budgets == [4096, 8192]

    for _ in range(3):
        llm.enqueue("  ")
    with pytest.raises(LLMBadOutput):
        await complete_text(llm, [ChatMessage("user", "x")], [], 1000)
    assert llm.budgets[2:] == [1000, 2000, 4000]


def test_preview_counts_conversations_characters_tokens_and_calls() -> None:
    convs = [Conversation((msg(1, 0), msg(2, 1))), Conversation((msg(3, 900),))]
    p = make_preview(convs, 5, ["a" * 10, "b" * 7])
    assert (p.conversations, p.available, p.messages, p.characters, p.tokens, p.parts,
            p.calls) == (2, 5, 3, 17, 5, 2, 3)
    assert make_preview(convs[:1], 5, ["a" * 8]).calls == 1  # one part needs no merge


async def test_parts_are_numbered_and_merged() -> None:
    llm = analyst()
    result = await analyse(llm, ["eins\n", "zwei\n", "drei\n"], DEFAULT_QUESTIONS["de"])
    assert "Part 2 of 3" in llm.calls[1].prompt and "<transcript>\nzwei\n</transcript>" in llm.calls[1].prompt
    merge = llm.calls[3].prompt
    assert merge.count("<part_report") == 3 and "strong findings" in merge and "weak ones" in merge
    assert result.parts == (PART,) * 3 and result.final == FINAL
    assert "counter-evidence" in llm.calls[0].prompt and "«quote» (YYYY-MM-DD)" in llm.calls[0].prompt


async def test_preview_only_sends_nothing_and_saves_nothing(  # type: ignore[no-untyped-def]
        transcript: list[Any], store: MemoryStore, tmp_path: Path, capsys) -> None:
    llm = analyst()
    assert await run_command(settings_for(tmp_path, **ANALYST, database_url=store.db.url),
                             parse_args(["analyse", "--preview"]), llm) == 0
    out = capsys.readouterr().out
    assert f"10 of 10 conversations, {len(transcript)} messages" in out and "2 parts, 3 calls" in out
    chars = int(out.split("messages, ")[1].split(" characters")[0].replace(",", ""))
    assert f"(~{math.ceil(chars / 4):,} tokens)" in out
    assert llm.calls == [] and list_reports(tmp_path) == []

    await run_command(settings_for(tmp_path, **ANALYST, database_url=store.db.url),
                      parse_args(["analyse", "--preview", "--keywords", "zahnarzt, ARZT"]), llm)
    assert "2 of 10 conversations, 8 messages" in capsys.readouterr().out
    await run_command(settings_for(tmp_path, **ANALYST, database_url=store.db.url),
                      parse_args(["analyse", "--preview", "--sample", "3",
                                  "--from", "2025-03-04", "--to", "2025-03-24"]), llm)
    assert "3 of 7 conversations, 12 messages" in capsys.readouterr().out  # March 6, 15, 24: first, middle, last


async def test_blind_and_blueprint_prompts(transcript: list[Any], store: MemoryStore, tmp_path: Path) -> None:
    settings = settings_for(tmp_path, **ANALYST, database_url=store.db.url,
                            persona="Trocken, ehrlich, etwas spöttisch.")
    blind, seeing = analyst(), analyst()
    await run_command(settings, parse_args(["analyse", "--yes", "--sample", "2"]), blind)
    questions = tmp_path / "questions.txt"
    questions.write_text("# mine\nWann wird er kalt?\n\nWem gibt er recht?\n", encoding="utf-8")
    await run_command(settings, parse_args(["analyse", "--yes", "--sample", "2", "--mode", "blueprint",
                                            "--questions", str(questions)]), seeing)
    assert "You know nothing about how the companion is built" in blind.calls[0].prompt
    assert "You are Mnemo" not in blind.calls[0].prompt and "spöttisch" not in blind.calls[0].prompt
    assert DEFAULT_QUESTIONS["de"][1] in blind.calls[0].prompt
    sent = [line[4:14] for line in blind.calls[0].prompt.splitlines() if line.startswith("=== ")]
    assert sent == ["2025-03-03", "2025-03-30"]  # a sample of two: the first and the last conversation
    seen = seeing.calls[0].prompt
    assert "You are Mnemo, a personal companion" in seen and "search_memory" in seen and "spöttisch" in seen
    assert "receives automatically" in seen and "open topic" in seen and "diary" in seen
    assert "1. Wann wird er kalt?\n2. Wem gibt er recht?" in seen and DEFAULT_QUESTIONS["de"][1] not in seen
    modes = sorted(r.summary["Mode"] for r in list_reports(tmp_path))
    assert modes == ["blind", "blueprint"]


async def test_a_report_is_saved_with_verified_quotes_listed_and_deleted(
        transcript: list[Any], store: MemoryStore, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    llm = analyst()
    llm.enqueue("")  # a reasoning model that spent its whole budget thinking
    assert await run_command(settings_for(tmp_path, **ANALYST, database_url=store.db.url),
                             parse_args(["analyse", "--user", "tg:42", "--yes"]), llm) == 0
    assert llm.budgets == [4096, 8192, 4096, 8192]  # part 1 twice (empty, then doubled), part 2, merge
    out = capsys.readouterr().out
    assert "part 1 of 2" in out and "1 of 2 quotes verified, 1 not found" in out

    [info] = list_reports(tmp_path)
    text = info.path.read_text(encoding="utf-8")
    assert info.name.startswith("analysis-") and info.path.parent == tmp_path / "reports"
    assert info.summary["Analyst"] == "openai / analyst-1" and info.summary["Mode"] == "blind"
    assert "all conversations" in info.summary["Selection"] and "user tg:42" in info.summary["Selection"]
    assert (info.summary["Size"].startswith("10 of 10 conversations")
            and info.summary["Quotes"] == "1 of 2 quotes verified, 1 not found")
    final = text.split("## Final report")[1].split("## Part reports")[0]
    assert f"«{REAL.lower()}» ({REAL_DATE}) [✓ verified]" in final
    assert f"«{INVENTED}» ({REAL_DATE}) [✗ not found]" in final
    assert "### Part 1 of 2" in text and "### Part 2 of 2" in text and "\n##### Widerspruch\n" in text
    assert "\n#### Starke Befunde\n" in final and info.summary["Questions"] == "built-in (6)"

    settings = settings_for(tmp_path, **ANALYST, database_url=store.db.url)
    assert await run_command(settings, parse_args(["analyse", "--list"])) == 0
    assert info.name in capsys.readouterr().out
    assert await run_command(settings, parse_args(["analyse", "--delete", "../mnemo.sqlite3"])) == 1
    assert await run_command(settings, parse_args(["analyse", "--delete", info.name])) == 0
    assert list_reports(tmp_path) == [] and (store.db.url or (tmp_path / "mnemo.sqlite3").exists())
