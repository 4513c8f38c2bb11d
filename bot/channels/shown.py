"""The shown-message ledger: which messages a reply has shown so far and what each displays, kept in the inbox."""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from memory import Inbox

H = TypeVar("H")  # how a messenger names a message it showed: Telegram's message id, Matrix's event id

HELP_MARK = "help:"  # the ledger's first entry, so marked, is the help text sent before the reply (not a part)


def split_help(ids: Sequence[str], looks: Sequence[str]) -> tuple[str | None, list[str], list[str]]:
    """A ledger as recorded: the help message sent before the reply (None: none), then the reply's parts and looks."""
    if ids and ids[0].startswith(HELP_MARK):
        return ids[0].removeprefix(HELP_MARK), list(ids[1:]), list(looks[1:])
    return None, list(ids), list(looks)


def as_written(looks: str) -> str:
    """The words of a message whose record is its words."""
    return looks


class Shown(Generic[H]):
    """The messages one incoming message's reply has shown so far and what each displays, recorded in the inbox.

    A replay after a crash edits these messages instead of sending them again, so a reply appears once, and a
    streamed preview goes on from the words it showed instead of starting again from the first. What a message
    displays (`looks`) is written as its channel likes (Matrix: the words; Telegram: words and buttons);
    `text_of` reads the words out of it. The help text of a crisis, sent as a message of its own before the reply,
    is recorded ahead of the parts (`put_help`), so a replay does not send it twice.
    """

    def __init__(self, inbox: Inbox, channel: str, event_id: str, message_ids: Sequence[H] = (),
                 looks: Sequence[str] = (), text_of: Callable[[str], str] = as_written,
                 help_id: H | None = None) -> None:
        self.inbox, self.channel, self.event_id = inbox, channel, event_id
        self.help = help_id  # the help text's own message, sent before the reply (a crisis), once it was sent
        self._help_looks = ""
        self.ids = list(message_ids)
        self._looks = list(looks)[:len(self.ids)] + [""] * (len(self.ids) - len(looks))
        self._text_of = text_of

    def at(self, part: int) -> H | None:
        """The message shown as this part of the reply (0 = the first chunk or the preview), if any."""
        return self.ids[part] if part < len(self.ids) else None

    def looks(self, part: int) -> str:
        """What this part displays, as recorded; empty when unknown."""
        return self._looks[part] if part < len(self._looks) else ""

    def text(self, part: int) -> str:
        """The words this part displays (for the preview); empty when unknown."""
        looks = self.looks(part)
        return self._text_of(looks) if looks else ""

    async def put(self, part: int, message_id: H, looks: str = "") -> None:
        """Record that this part of the reply is now shown as this message, displaying `looks`."""
        if part < len(self.ids):
            self.ids[part], self._looks[part] = message_id, looks
        else:
            self.ids.append(message_id)
            self._looks.append(looks)
        await self._record()

    async def put_help(self, message_id: H, looks: str = "") -> None:
        """Record that the help text went out as this message before the reply (a replay does not send it again)."""
        self.help, self._help_looks = message_id, looks
        await self._record()

    async def _record(self) -> None:
        """Write the ledger: the help message first (marked), then the reply's parts."""
        head = [f"{HELP_MARK}{self.help}"] if self.help is not None else []
        looks = [self._help_looks] if self.help is not None else []
        await self.inbox.show(self.channel, self.event_id, head + [str(i) for i in self.ids], looks + self._looks)


async def show_parts(count: int, shown: Shown[H] | None, edit: Callable[[int, H], Awaitable[bool]],
                     send: Callable[[int], Awaitable[H]], looks: Callable[[int], str] | None = None) -> list[H]:
    """Show a reply's parts in order; the messages that show them.

    A part shown before (the preview, or a message sent before a crash) is brought up to date by `edit` (False:
    that message is gone, and the part is sent anew); every new message is recorded in `shown` the moment it
    was sent, displaying `looks(part)`.
    """
    ids: list[H] = []
    for part in range(count):
        earlier = shown.at(part) if shown is not None else None
        if earlier is not None and await edit(part, earlier):
            ids.append(earlier)
            continue
        sent = await send(part)
        ids.append(sent)
        if shown is not None:
            await shown.put(part, sent, looks(part) if looks is not None else "")
    return ids


async def show_once(shown: Shown[H] | None, part: int, send: Callable[[], Awaitable[H]]) -> None:
    """Send one more part of a reply (its file) unless `shown` holds it from before a crash; record it once sent."""
    if shown is not None and shown.at(part) is not None:
        return
    sent = await send()
    if shown is not None:
        await shown.put(part, sent)
