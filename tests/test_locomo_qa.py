"""bench/locomo_qa.py end to end on a tiny LoCoMo-format conversation, against the local fake OpenAI-compatible API:
mnemo's real prompt and tools, the full-context baseline, the judge, the printed J scores and token counts."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench import locomo_qa
from tests.fakes.llm_api import FakeLLM, Reply, count_tokens, prompt_text

SESSION_1 = [
    ("Anna", "Hi Ben, how was your week?"),
    ("Ben", "Busy, but good. What about you?"),
    ("Anna", "I started playing the cello in the city orchestra last month."),  # D1:3, gold of the first question
    ("Ben", "That sounds wonderful, I wish I could play something."),
    ("Ben", "We moved to Hamburg on 2 May, the boxes are still everywhere."),  # D1:5, gold of the second
    ("Anna", "Congratulations on the new flat!"),
    ("Anna", "My dog Bruno and my cat Mia keep me company in the evenings."),  # D1:7, gold of the third
    ("Ben", "They sound lovely."),
    ("Anna", "Let's talk again soon."),
    ("Ben", "Sure, take care."),
]
SESSION_2 = [
    ("Anna", "Hey Ben, long time no see."),
    ("Ben", "Hi Anna! Work has been crazy."),
    ("Anna", "I went hiking in the Alps last weekend."),
    ("Ben", "Nice, which trail did you take?"),
    ("Anna", "A short one near the lake, the view was great."),
    ("Ben", "I should go there one day."),
    ("Anna", "You should, bring good shoes."),
    ("Ben", "I will, thanks for the tip."),
    ("Anna", "How is your sister doing?"),
    ("Ben", "She is fine, she started a new job."),
    ("Anna", "Say hello from me."),
    ("Ben", "I will. Talk soon!"),
]
QUESTIONS = [  # (question, gold, category, evidence)
    ("Which instrument does Anna play in the city orchestra?", "cello", 4, "D1:3"),
    ("When did Ben move to Hamburg?", "2 May 2023", 2, "D1:5"),
    ("Which pets does Anna have?", "a dog and a cat", 1, "D1:7"),
]
MNEMO_ANSWERS = {QUESTIONS[0][0]: "The cello.", QUESTIONS[1][0]: "On 2 May 2023.", QUESTIONS[2][0]: "I don't know."}
BASELINE_ANSWERS = {QUESTIONS[0][0]: "Cello.", QUESTIONS[1][0]: "2 May 2023.", QUESTIONS[2][0]: "A dog and a cat."}
RIGHT = {"The cello.", "On 2 May 2023.", "Cello.", "2 May 2023.", "A dog and a cat."}
OBSERVATION = "Anna plays the cello in the city orchestra."


def write_conversation(path: Path) -> None:
    """A LoCoMo-format file with one conversation of two sessions, its observations and three questions."""
    def session(turns: list[tuple[str, str]], number: int) -> list[dict[str, str]]:
        return [{"speaker": who, "dia_id": f"D{number}:{i}", "text": text} for i, (who, text) in enumerate(turns, 1)]

    conversation = {"speaker_a": "Anna", "speaker_b": "Ben",
                    "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": session(SESSION_1, 1),
                    "session_2_date_time": "10:04 am on 20 June, 2023", "session_2": session(SESSION_2, 2)}
    observation = {"session_1_observation": {
        "Anna": [[OBSERVATION, "D1:3"], ["Anna has a dog named Bruno and a cat named Mia.", "D1:7"]],
        "Ben": [["Ben moved to Hamburg on 2 May.", "D1:5"]]}}
    qa = [{"question": q, "answer": a, "category": c, "evidence": [e]} for q, a, c, e in QUESTIONS]
    qa.append({"question": "What is Anna's favourite opera?", "adversarial_answer": "Carmen", "category": 5,
               "evidence": ["D1:3"]})  # category 5 is left out, as the papers do
    path.write_text(json.dumps([{"sample_id": "tiny-0", "conversation": conversation, "observation": observation,
                                 "qa": qa}]), encoding="utf-8")


def last_user_text(body: dict[str, Any]) -> str:
    """The content of the request's last user message."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


class Script:
    """The fake's answers: the chat model by question (one tool round for the second), the judge by answer."""

    def __init__(self) -> None:
        self.replies: dict[str, list[str]] = {"mnemo": [], "full-context": []}

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body["model"] == "fake-judge":
            answer = re.search(r"Generated answer: (.*)", prompt_text(body))
            assert answer is not None
            label = "CORRECT" if answer.group(1).strip() in RIGHT else "WRONG"
            return Reply(text=json.dumps({"reasoning": "compared with the gold answer", "label": label}))
        asked = last_user_text(body)
        question = next(q for q, *_ in QUESTIONS if q in asked)
        if "<conversation>" in asked:
            self.replies["full-context"].append(BASELINE_ANSWERS[question])
            return Reply(text=BASELINE_ANSWERS[question])
        looked_up = any(m["role"] == "tool" for m in body["messages"])
        if question == QUESTIONS[1][0] and not looked_up:
            self.replies["mnemo"].append("")
            return Reply(tool_calls=[("recall_chat", {"query": "Ben moved to Hamburg"})])
        self.replies["mnemo"].append(MNEMO_ANSWERS[question])
        return Reply(text=MNEMO_ANSWERS[question])


@pytest.fixture
async def fake() -> Any:
    async with FakeLLM(models=["fake-chat", "fake-judge"]) as server:
        yield server


async def test_bench_answers_with_memory_and_full_context_and_prints_j_and_tokens(
        fake: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "locomo.json"
    write_conversation(data)
    script = Script()
    fake.responder = script
    results = await locomo_qa.main([
        str(data), "--json", "--embedder", "tests.fakes.embedder:FakeEmbedder",
        "--model", "fake-chat", "--base-url", fake.openai_base_url, "--api-key", "test-key",
        "--judge-model", "fake-judge",  # the judge's URL and key are the chat model's
    ])
    out = capsys.readouterr().out

    chat = [r for r in fake.requests if r.json["model"] == "fake-chat"]
    mnemo = [r for r in chat if "<conversation>" not in last_user_text(r.json)]
    baseline = [r for r in chat if "<conversation>" in last_user_text(r.json)]
    judged = [r for r in fake.requests if r.json["model"] == "fake-judge"]
    assert (len(mnemo), len(baseline), len(judged)) == (4, 3, 6)  # one tool round; every answer judged once
    assert all(r.headers["authorization"] == "Bearer test-key" for r in fake.requests)

    # mnemo's real prompt: the memory block brought the note of the gold turn, which is outside the window
    first = mnemo[0].json
    system = first["messages"][0]["content"]
    assert "Relevant notes from memory (data):" in system and OBSERVATION in system
    assert "I started playing the cello" not in prompt_text(first)
    assert {t["function"]["name"] for t in first["tools"]} >= {"search_memory", "recall_chat"}
    # the second question went through a tool round: recall_chat's result held the gold turn
    tool_results = [m["content"] for m in mnemo[2].json["messages"] if m["role"] == "tool"]
    assert any("We moved to Hamburg on 2 May" in text for text in tool_results)
    # the baseline had the whole conversation, with its sessions' dates, and no memory block
    for request in baseline:
        text = prompt_text(request.json)
        assert all(line in text for _, line in SESSION_1 + SESSION_2)
        assert "2023-05-08" in text and "2023-06-20" in text and "Relevant notes" not in text
    assert "favourite opera" not in "".join(prompt_text(r.json) for r in fake.requests)  # category 5 not asked

    # J per category: mnemo missed the multi-hop question (category 1), the baseline got all three
    assert re.search(r"^mnemo\s+3\s+0\.667\s+0\.000\s+1\.000\s+-\s+1\.000\s", out, re.M), out
    assert re.search(r"^full-context\s+3\s+1\.000\s+1\.000\s+1\.000\s+-\s+1\.000\s", out, re.M), out
    assert "questions per category: c1 1, c2 1, c3 0, c4 1" in out

    # tokens: the provider's usage summed over every call of an answer, per question
    mnemo_in = sum(count_tokens(prompt_text(r.json)) for r in mnemo)
    mnemo_out = sum(count_tokens(text) for text in script.replies["mnemo"])
    base_in = sum(count_tokens(prompt_text(r.json)) for r in baseline)
    base_out = sum(count_tokens(text) for text in script.replies["full-context"])
    figures = json.loads(out.strip().splitlines()[-1])["systems"]
    assert figures == results
    assert (figures["mnemo"]["input_tokens"], figures["mnemo"]["output_tokens"]) == (mnemo_in, mnemo_out)
    assert (figures["full-context"]["input_tokens"], figures["full-context"]["output_tokens"]) == (base_in, base_out)
    assert figures["mnemo"]["calls_per_question"] == 1.33 and figures["full-context"]["calls_per_question"] == 1.0
    assert f"{mnemo_in / 3:>9.1f} {mnemo_out / 3:>9.1f}" in out and f"{base_in / 3:>9.1f} {base_out / 3:>9.1f}" in out
    assert base_in > mnemo_in / 4  # the baseline's one prompt holds the whole conversation
    assert figures["mnemo"]["failed"] == figures["full-context"]["failed"] == 0
    assert 0 < figures["mnemo"]["latency_p50_s"] <= figures["mnemo"]["latency_p95_s"]


async def test_a_verdict_that_is_neither_label_counts_as_failed_not_silently_wrong(
        fake: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "locomo.json"
    write_conversation(data)
    script = Script()
    fake.responder = lambda body: Reply(text="I am not sure.") if body["model"] == "fake-judge" else script(body)
    results = await locomo_qa.main([
        str(data), "--per-category", "1", "--conversations", "tiny-0", "--systems", "full-context",
        "--embedder", "tests.fakes.embedder:FakeEmbedder", "--model", "fake-chat", "--judge-model", "fake-judge",
        "--base-url", fake.openai_base_url,
    ])
    assert list(results) == ["full-context"]
    assert results["full-context"]["J"] == 0.0 and results["full-context"]["failed"] == 3
    assert re.search(r"^full-context\s+3\s+0\.000\s.*\s3$", capsys.readouterr().out, re.M)


def test_judge_labels() -> None:
    assert locomo_qa.judge_label('{"label": "CORRECT"}') is True
    assert locomo_qa.judge_label('```json\n{"reasoning": "no", "label": "WRONG"}\n```') is False
    assert locomo_qa.judge_label("It names the same date. CORRECT") is True
    with pytest.raises(ValueError):
        locomo_qa.judge_label('{"label": "MAYBE"}')


def test_per_category_takes_the_first_questions_of_each() -> None:
    qas = [locomo_qa.QA(f"q{i}", "a", c, ()) for i, c in enumerate([1, 2, 1, 1, 4, 2])]
    assert [qa.question for qa in locomo_qa.pick(qas, 2)] == ["q0", "q1", "q2", "q4", "q5"]
    assert locomo_qa.pick(qas, None) == qas
