"""Issue 52's invariants, checked after every step of the state machine (tests/test_interleavings.py) on the world
of tests/interleaving_kit.py: what the step changed is compared with a snapshot taken before it.

(a) a crisis part anywhere gets the help text first; (b) no question is decided except by the asker's own very
next message, with nothing sent by mnemo in between, or by its own button; (c) nothing of an incognito message is
stored; (d) no check-in, diary, morning brief or yearly date inside the quiet hours; (e) someone else's words never
become the person's fact, an answer or a reminder."""
from __future__ import annotations

from dataclasses import dataclass

from bot.conversation.questions import QUESTION, OpenQuestion
from tests.interleaving_kit import FULL_REQUEST, NO, YES, Asked, Broken, Event, Step, World

TYPED = frozenset({"text", "voice", "edit", "forward"})  # kinds whose words may answer (a file's caption never does)


@dataclass(frozen=True)
class Before:
    """What the world held before the step."""

    decisions: dict[str, str]
    reminders: dict[int, str]
    counts: dict[str, int]


async def snapshot(world: World) -> Before:
    return Before(await world.decisions(), await world.reminders(), world.counts())


async def check(world: World, before: Before) -> list[Broken]:
    """Every promise the last step broke; the world's record of open questions brought up to date."""
    step = world.step
    broken = [*world.quiet_breaks]
    world.quiet_breaks.clear()
    broken += await help_first(world, step)
    broken += await decided(world, step, before)
    broken += await reminders(world, step, before)
    broken += incognito(world, step, before)
    broken += foreign_facts(world)
    await note_questions(world, step)
    return broken


async def help_first(world: World, step: Step) -> list[Broken]:
    """(a) A step that brought a crisis part: mnemo's first message in it is the help text."""
    if not step.crisis:
        return []
    helps = await world.helps()
    if step.sent and step.sent[0].text in helps:
        return []
    first = step.sent[0].text[:80] if step.sent else "nothing"
    return [Broken("a-help-first", f"{step.name}: a crisis part, and mnemo's first message was {first!r}")]


def _between(world: World, asked: Asked, event: int | None) -> list[Event]:
    end = len(world.timeline) if event is None else event
    return world.timeline[asked.event + 1:end]


def _what(events: list[Event]) -> str:
    return ", ".join(f"{e.by}:{e.kind}" for e in events) or "nothing"


async def decided(world: World, step: Step, before: Before) -> list[Broken]:
    """(b), (e) Each question decided in this step: by its own button, or by the asker's own typed yes or no as the
    very next message after it."""
    after = await world.decisions()
    broken = []
    for key, was in before.decisions.items():
        now = after.get(key, was)
        if was != "pending" or now not in ("active", "rejected"):
            continue
        asked = world.asked.get(key)
        if asked is None:
            continue  # decided before this machine saw it asked (cannot happen: every question is asked in a step)
        verdict = "yes" if now == "active" else "no"
        if step.press:
            kind, said, _ = step.press.split(":")
            if step.press.endswith(f":{asked.number}") and kind == asked.kind and verdict == said:
                continue
            broken.append(Broken("b-decided-by-other-button", f"{key} {now} by a press of {step.press}"))
            continue
        message = step.message
        words = (step.words if step.kind == "voice" else message.text if message else "").strip().lower()
        said = "yes" if words in YES else "no" if words in NO else ""
        if message is None or not said:
            code = "b-decided-without-answer" if now == "active" else f"b-{asked.kind}-dropped-as-no"
            broken.append(Broken(code,
                                 f"{key} {now} in step {step.name} without a yes or no (between: "
                                 f"{_what(_between(world, asked, step.event))})"))
        elif not step.own:
            broken.append(Broken("e-forwarded-answer", f"{key} {now} by a forwarded {message.text!r}"))
        elif step.event != asked.event + 1:
            broken.append(Broken("b-typed-not-next", f"{key} {now} by {message.text!r} ({step.kind}) with "
                                 f"{_what(_between(world, asked, step.event))} between the question and it"))
        elif step.kind not in TYPED or verdict != said:
            broken.append(Broken("b-typed-wrong", f"{key} {now} by {message.text!r} ({step.kind})"))
    return broken


async def reminders(world: World, step: Step, before: Before) -> list[Broken]:
    """(b), (e) A new reminder: from the person's own full request, or as the very next message after an ask-back."""
    broken = []
    for rid, text in (await world.reminders()).items():
        if rid in before.reminders:
            continue
        message = step.message
        if message is None:
            broken.append(Broken("b-reminder-from-nothing", f"reminder {text!r} set in step {step.name}"))
        elif not step.own:
            broken.append(Broken("e-forwarded-reminder", f"reminder {text!r} set from the forwarded "
                                 f"{message.text!r}"))
        elif not message.text.startswith(FULL_REQUEST):
            asked = world.asked.get("askback")
            if asked is None or step.event != asked.event + 1:
                between = _what(_between(world, asked, step.event)) if asked else "no ask-back"
                broken.append(Broken("b-askback-not-next", f"reminder {text!r} set from {message.text!r} with "
                                     f"{between} between the ask-back and it"))
    return broken


def incognito(world: World, step: Step, before: Before) -> list[Broken]:
    """(c) A message in incognito adds no row where words are kept, and its words are nowhere in the database."""
    broken = []
    if step.incognito:
        grew = {name: n - before.counts[name] for name, n in world.counts().items() if n > before.counts[name]}
        if grew:
            broken.append(Broken("c-incognito-stored", f"{step.name} in incognito added rows: {grew}"))
    kept = world.tokens_kept()
    if kept:
        broken.append(Broken("c-incognito-words-kept", f"words of messages in incognito in the database: {kept}"))
        world.incognito_tokens = [tok for tok in world.incognito_tokens if tok not in kept]  # reported once
    return broken


def foreign_facts(world: World) -> list[Broken]:
    """(e) The forwarded 'Ich ziehe nächsten Monat nach Kuba' is no fact or profile entry of the person's."""
    found = [r[0] for r in world.read(
        "SELECT text FROM notes WHERE text LIKE '%Kuba%' AND valid_to IS NULL UNION ALL "
        "SELECT value FROM profile_entries WHERE value LIKE '%Kuba%' UNION ALL "
        "SELECT value FROM pending_profile WHERE value LIKE '%Kuba%'")]
    new = [f for f in found if f not in world.foreign_seen]
    world.foreign_seen.update(new)
    return [Broken("e-forwarded-fact", f"someone else's words kept as the person's: {new}")] if new else []


async def note_questions(world: World, step: Step) -> None:
    """Keep the question (or the ask-back) this step asked, with the timeline index of the message asking it."""
    if step.message is not None:
        world.asked.pop("askback", None)  # the next message of the person's was the only one that could complete it
    asks = await world.ask_texts()
    for index in range(len(world.timeline) - 1, -1, -1):
        event = world.timeline[index]
        if event.by == "mnemo" and event.text in asks and step.sent and any(s.text in asks for s in step.sent):
            world.asked["askback"] = Asked("askback", index)
            break
    raw = await world.store.state.get(world.scope, QUESTION)  # as stored: reading it through the engine drops one
    if raw is None:                                            # that expired, which no step of the person's did
        return
    question = OpenQuestion(**raw)
    key = f"{question.kind}:{question.item_id}"
    if key not in world.asked and step.sent:
        last = max(i for i, e in enumerate(world.timeline) if e.by == "mnemo")
        fact = ("", "", "")
        if question.kind == "profile":
            pending = await world.store.profile.pending_fact(world.scope, question.item_id)
            fact = (pending.category, pending.key, pending.value)
        world.asked[key] = Asked(question.kind, last, question.item_id, question.number, fact)
