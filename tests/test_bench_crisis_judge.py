"""`bench/crisis.py judge` against the fake OpenAI-compatible API: the request MNEMO_CRISIS_JUDGE makes goes to the
operator's model for a few rows of each set, and the confusion matrix per set and language comes out as the scripted
judge answered (a garbage answer counted as no verdict). No row's text is printed or asserted on."""
from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from bench.crisis import per_language
from bench.crisis_judge import main, model_settings, parse_args, run, the_sets
from bot.conversation.crisis_judge import INSTRUCTION
from tests.fakes.llm_api import FakeLLM


def test_the_model_comes_from_the_flags_else_the_background_else_the_chat_settings() -> None:
    env = {"MNEMO_CHAT_MODEL": "chat-m", "MNEMO_CHAT_BASE_URL": "http://chat", "MNEMO_BACKGROUND_MODEL": "bg-m"}
    found = model_settings(parse_args([]), env)
    assert (found["model"], found["base_url"], found["provider"]) == ("bg-m", "http://chat", "openai")
    assert model_settings(parse_args(["--model", "mine", "--base-url", "http://mine"]), env)["base_url"] == "http://mine"
    with pytest.raises(SystemExit):
        model_settings(parse_args([]), {})


async def test_a_scripted_judge_on_a_few_rows_gives_the_confusion_matrix_per_set_and_language() -> None:
    answered = 0

    def judge(body: dict[str, Any]) -> str:
        nonlocal answered
        answered += 1
        assert body["messages"][0]["content"] == INSTRUCTION and body["model"] == "operator-model"
        return "vielleicht?" if answered == 1 else json.dumps({"help_line": True})  # the first: garbage

    lines: list[str] = []
    async with FakeLLM(models=("operator-model",)) as fake:
        fake.responder = judge
        args = parse_args(["--model", "operator-model", "--base-url", fake.openai_base_url, "--api-key", "k",
                           "--limit", "2", "--concurrency", "1"])
        await run(args, {}, lines.append)

    sets = the_sets(2)
    present = [(name, rows) for name, rows in sets if rows is not None]
    assert answered == sum(len(rows) for _, rows in present) and len(present) >= 2
    first = True
    for name, rows in sets:
        if rows is None:
            assert f"{name}: not on this branch, skipped" in "\n".join(lines)
            continue
        said = [not (first and at == 0) for at in range(len(rows))]  # every yes, but the garbage answer
        at = lines.index(f"{name}: {len(rows)} rows")
        for offset, (lang, figures) in enumerate(per_language(said, rows).items(), start=1):
            missing = 1 if first and lang in ("all", rows[0].lang) else 0
            assert lines[at + offset] == f"  {figures.line(lang)}   no verdict {missing}"
        first = False
    assert "  no verdict: crisis_judge.garbage 1" in lines
    assert not any(row.text in line for _, rows in present for row in rows for line in lines), "no text printed"


def test_the_command_is_one_of_bench_crisis(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[argparse.Namespace] = []

    async def fake_run(args: argparse.Namespace, env: dict[str, str]) -> None:
        ran.append(args)

    monkeypatch.setattr("bench.crisis_judge.run", fake_run)
    from bench.crisis import main as crisis_main

    assert crisis_main(["judge", "--model", "m", "--limit", "3"]) == 0 and ran[0].limit == 3
    assert main(["--model", "m"]) == 0 and ran[1].model == "m"
