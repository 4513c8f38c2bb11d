"""Whether a typed message may answer what the companion asked (a yes/no question, a reminder asked back): only as
the person's very next message, with nothing else of the companion's in between, within an hour (`may_answer`,
pure); what the companion sent meanwhile besides its logged messages (`sent_between`)."""
from __future__ import annotations

from collections.abc import Sequence

from memory import MemoryStore, Message, Scope

ANSWER_WINDOW = 3600.0  # seconds after the asking within which a typed answer counts; later only buttons decide


def nothing_between(between: Sequence[Message], pushed: Sequence[str]) -> bool:
    """Whether the companion sent nothing between its asking and this message: of the companion's logged messages
    after the message it asked under only the reply that asked (a reply, the first), and no push of any kind
    (`pushed`: the outbox's kinds sent since the asking: a reminder, a check-in, a brief, a saved notice ...)."""
    said = [m for m in between if m.role == "assistant"]
    return not pushed and len(said) <= 1 and all(m.kind == "reply" for m in said)


def may_answer(between: Sequence[Message], pushed: Sequence[str], asked_at: float, now: float,
               window: float = ANSWER_WINDOW) -> bool:
    """Whether a typed message, the person's very next after the asking, answers it: nothing of the companion's
    came between (`nothing_between`) and it came within `window` seconds."""
    return 0 <= now - asked_at <= window and nothing_between(between, pushed)


async def sent_between(store: MemoryStore, scope: Scope, start: float, end: float) -> list[str]:
    """What the companion sent in [start, end] that its logged messages do not show in order: the outbox's pushes by
    kind (a reminder, a check-in, a brief, a saved notice ...) and an answer to each command or press ('command')."""
    pushed = await store.outbox.sent_between(scope, start, end)
    return pushed + ["command"] * await store.runs.between(scope, start, end)
