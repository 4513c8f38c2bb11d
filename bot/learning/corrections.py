"""Corrections: when the user says something is wrong, a judge decides per remembered item what changes."""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.errors import LLMBadOutput
from bot.learning import forgetting
from bot.llm.port import LLM, ChatMessage, CompletionRequest, SystemBlock
from bot.quoting import clip
from memory import FailureCounts, MemoryStore, NotFound, Scope, SearchHit, new_processing

log = logging.getLogger(__name__)

# A generous prefilter: it only decides whether the judge is asked at all.
_PATTERNS = [
    r"\bstimmt\s+(so\s+)?nicht\b", r"\bfalsch\b", r"\bnicht\s+mehr\b", r"\berfunden\b", r"\bnie\s+gesagt\b",
    r"\bdu\s+verwechselst\b", r"\bverwechselt\b", r"\bhabe?\s+ich\s+(nie|nicht)\b", r"\bwar\s+ich\s+nie\b",
    r"\bich\s+war\s+nie\b", r"\bkorrigier", r"\bvergiss\b", r"\bdas\s+ist\s+nicht\s+(so|richtig|wahr)\b",
    r"\bquatsch\b", r"\bnein,\s", r"\bthat'?s\s+(wrong|not\s+(true|right))\b", r"\bi\s+never\s+(said|told)\b",
    r"\bnot\s+any\s*more\b", r"\bno\s+longer\b", r"\byou'?re\s+(mixing|confusing)\b", r"\bmade\s+(that|it)\s+up\b",
    r"\bforget\s+(that|it|about)\b", r"\bincorrect\b", r"\bi'?m\s+not\b",
]
_PREFILTER = re.compile("|".join(_PATTERNS), re.IGNORECASE)
_FORGET = re.compile(r"\b(vergiss|lösch|forget|delete)\w*\b", re.IGNORECASE)

JUDGE = """You check a companion's memory after the person objected. You get the person's message, the
companion's previous reply, and remembered items with ids. For EACH item decide:
- "keep": the item is not what the person objects to, or you are not sure (in doubt, keep).
- "delete": the person says the item is false or never happened.
- "rewrite": the item is partly wrong or outdated; give the corrected text in "text".
Judge by meaning, not by similar words: "Ich war nie in Ägypten" does not touch "Christian war in Ägypten".
Answer only with JSON: {"verdicts": [{"id": "note:12", "action": "keep|delete|rewrite", "text": "..."}]}"""

SCHEMA = {"type": "object", "properties": {"verdicts": {"type": "array", "items": {"type": "object", "properties": {
    "id": {"type": "string"}, "action": {"type": "string", "enum": ["keep", "delete", "rewrite"]},
    "text": {"type": "string"}}, "required": ["id", "action"]}}}, "required": ["verdicts"]}


def looks_like_correction(text: str) -> bool:
    """True when the message may object to something remembered or said (the judge decides the rest)."""
    return bool(_PREFILTER.search(text))


@dataclass(frozen=True)
class Change:
    """One applied correction."""

    item: str  # "note:12", "profile:3", "thought:4"
    action: str  # "closed", "deleted", "rewritten"
    old: str
    new: str = ""


def verdicts(data: Any, allowed: set[str]) -> list[tuple[str, str, str]]:
    """Valid (id, action, text) triples for the candidates shown; anything else is dropped."""
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list):
        raise LLMBadOutput(f"judge answer has no verdict list ({type(data).__name__})")
    out = []
    for v in data["verdicts"]:
        if not isinstance(v, dict) or v.get("id") not in allowed:
            continue
        action, text = v.get("action"), str(v.get("text") or "").strip()
        if action == "delete" or (action == "rewrite" and text):
            out.append((str(v["id"]), str(action), text))
    return out


async def candidates(store: MemoryStore, scope: Scope, user_text: str, previous_reply: str) -> list[SearchHit]:
    """Items the objection may be about: found with the user's message and with the bot's previous reply."""
    found: dict[str, SearchHit] = {}
    for query in (user_text, previous_reply):
        if query.strip():
            for hit in await store.search(scope, query, ("note", "profile", "thought"), k=4):
                found.setdefault(f"{hit.source}:{hit.item_id}", hit)
    return list(found.values())


async def correct(
    store: MemoryStore, llm: LLM, scope: Scope, user_text: str, previous_reply: str,
) -> list[Change]:
    """Ask the judge about each candidate and apply its verdicts as one audited processing."""
    hits = await candidates(store, scope, user_text, previous_reply)
    if not hits:
        return []
    listing = "\n".join(f'[{h.source}:{h.item_id}] "{clip(h.text, 300)}"' for h in hits)
    prompt = f"Person: {user_text}\nCompanion before: {clip(previous_reply, 800)}\nItems:\n{listing}"
    completion = await llm.complete(CompletionRequest([ChatMessage("user", prompt)], system=[SystemBlock(JUDGE)],
                                                      json_schema=SCHEMA, max_tokens=600))
    try:
        decided = verdicts(completion.json(), {f"{h.source}:{h.item_id}" for h in hits})
    except LLMBadOutput:
        await store.failures.add("corrections.judge_bad_json")
        log.warning("correction judge answered no usable JSON; nothing changed")
        raise
    processing = new_processing("correct")
    forget = bool(_FORGET.search(user_text))
    changes = []
    for item, action, text in decided:
        try:
            changes.append(await _apply(store, scope, item, action, text, forget, processing, user_text))
        except NotFound:
            log.info("correction target %s vanished meanwhile", item)
    if changes:
        await forgetting.forget(store, llm, scope, forgotten_by(changes), processing=processing, reason=user_text,
                                final=False)
    return changes


def forgotten_by(changes: Sequence[Change]) -> forgetting.Forgotten:
    """What the copies must lose after these changes: the old texts; a rewrite's new text may stay."""
    return forgetting.Forgotten(facts=tuple(c.old for c in changes),
                                instead=tuple(c.new for c in changes if c.new))


async def _apply(
    store: MemoryStore, scope: Scope, item: str, action: str, text: str, forget: bool, processing: str, reason: str,
) -> Change:
    kind, raw_id = item.split(":")
    item_id = int(raw_id)
    if kind == "note":
        old = await store.notes.get(scope, item_id)
        if action == "rewrite":
            new = await store.notes.add(scope, text, kind=old.kind, importance=old.importance,
                                        source_message_ids=old.source_message_ids, dedupe=False,
                                        processing=processing, reason=reason)
            await store.notes.close(scope, item_id, superseded_by=new.note.id, processing=processing, reason=reason)
            return Change(item, "rewritten", old.text, text)
        if forget:
            await store.notes.delete(scope, item_id, processing=processing, reason=reason)
            return Change(item, "deleted", old.text)
        await store.notes.close(scope, item_id, processing=processing, reason=reason)
        return Change(item, "closed", old.text)
    if kind == "profile":
        entries = {e.id: e for e in await store.profile.list(scope)}
        if item_id not in entries:
            raise NotFound(item)
        entry = entries[item_id]
        if action == "rewrite":
            value = profile_value(entry.key, text)
            await store.profile.set(scope, entry.category, entry.key, value, processing=processing, reason=reason)
            return Change(item, "rewritten", f"{entry.key}: {entry.value}", f"{entry.key}: {value}")
        await store.profile.delete(scope, item_id, processing=processing, reason=reason)
        return Change(item, "deleted", f"{entry.key}: {entry.value}")
    thoughts = {th.id: th for th in await store.thoughts.latest(scope, 1000)}
    if item_id not in thoughts:
        raise NotFound(item)
    await store.thoughts.delete(scope, item_id, processing=processing, reason=reason)
    if action == "rewrite":
        await store.thoughts.add(scope, text, origin="correction", processing=processing)
        return Change(item, "rewritten", thoughts[item_id].text, text)
    return Change(item, "deleted", thoughts[item_id].text)


def profile_value(key: str, text: str) -> str:
    """The value in a judge's rewrite of a profile entry: it was shown 'key: value' and may answer the same way."""
    prefix = re.compile(rf"^\s*{re.escape(key)}\s*:\s*", re.IGNORECASE)
    value = text.strip()
    while (shorter := prefix.sub("", value, count=1)) != value and shorter:
        value = shorter
    return value


def describe(changes: Sequence[Change], lang: str) -> str:
    """One line per change, for the reply."""
    lines = []
    for c in changes:
        if c.action == "rewritten":
            lines.append(f"✏️ „{c.old}“ → „{c.new}“" if lang == "de" else f"✏️ “{c.old}” → “{c.new}”")
        else:
            lines.append(f"🗑️ „{c.old}“" if lang == "de" else f"🗑️ “{c.old}”")
    head = "Ich habe meine Erinnerung korrigiert:" if lang == "de" else "I corrected my memory:"
    return head + "\n" + "\n".join(lines)


PROPOSE = """The person objected to something in a companion's previous reply, and no remembered fact was
wrong. If the objection is about the companion's BEHAVIOUR (length, tone, topics, habits), write one
short rule in the person's language that the companion should follow from now on; otherwise none.
Answer only with JSON: {"rule": "..."} or {"rule": ""}."""


async def propose_rule(llm: LLM, user_text: str, previous_reply: str, failures: FailureCounts | None = None) -> str:
    """One background call: a behaviour rule in one sentence, or '' when the objection is not about behaviour.

    An answer that is not the JSON asked for raises LLMBadOutput and is counted in `failures` when given.
    """
    said = f"Companion before: {clip(previous_reply, 800)}\nPerson: {clip(user_text, 800)}"
    completion = await llm.complete(CompletionRequest(
        [ChatMessage("user", said)], system=[SystemBlock(PROPOSE)],
        json_schema={"type": "object", "properties": {"rule": {"type": "string"}}, "required": ["rule"]},
        max_tokens=200))
    try:
        data = completion.json()
        if not isinstance(data, dict):
            raise LLMBadOutput("rule proposal is not a JSON object")
    except LLMBadOutput:
        if failures is not None:
            await failures.add("corrections.rule_bad_json")
        raise
    return " ".join(str(data.get("rule") or "").split())[:300]
