"""The yes/no buttons under a held tool call: a yes runs it (once), a no drops it; either way the person is told."""
from __future__ import annotations

from bot.commands.invocation import Call, Pressed


async def press_tool(call: Call, fields: list[str]) -> Pressed | None:
    """'tool:yes|no:<number>': run or drop the held call asked under that number, if it is still the open question.

    The result replaces the question (on Telegram) or follows it as a message, so it has no short notice.
    """
    if len(fields) != 2 or fields[0] not in ("yes", "no") or not fields[1].isdigit():
        return None
    key = f"tool:{int(fields[1])}"
    text = await call.engine.questions.press(call.scope, key, fields[0])
    if text is None:
        return Pressed(call.t("button_stale"), closes=(key,), stale=True)
    return Pressed("", text, closes=(key,))
