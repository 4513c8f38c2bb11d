"""How the Matrix channel reads a person's message into the shared turn: its words (in a room without the mention and
with the sender's name), the older message it replies to, the thread it was written in, and when it was sent.
The channel (channel.py) builds on this part."""
from __future__ import annotations

from abc import abstractmethod
from typing import Any

from nio import (
    Event,
    MatrixRoom,
    RoomEncryptedAudio,
    RoomMessageAudio,
    RoomMessageEmote,
    RoomMessageNotice,
    RoomMessageText,
)

from bot.channels.base import Turn
from bot.channels.matrix.messages import (
    InThread,
    forwarded,
    quoted_fallback,
    replied_to,
    strip_reply_fallback,
    thread_root,
    without_mention,
)
from bot.channels.matrix.presses import MatrixPresses
from bot.channels.matrix.rooms import Rooms, Route
from bot.exchange import Attachment, Quoted


def in_thread(turn: Turn[str, str]) -> InThread | None:
    """Where the answer to a turn goes when its message was written in a thread (None: the room's timeline)."""
    return InThread(turn.thread, turn.origin) if turn.thread and turn.origin else None


class MatrixReading(MatrixPresses):
    """Reads Matrix messages into turns."""

    @property
    @abstractmethod
    def me(self) -> str:
        """The bot's own Matrix id."""

    @property
    @abstractmethod
    def rooms(self) -> Rooms:
        """Which rooms mnemo is in and whose each event is."""

    async def _message_turn(self, room: MatrixRoom, event: Event, route: Route, replayed: bool, text: str, *,
                            commands: bool = False, attachment: Attachment | None = None) -> Turn[str, str]:
        """The shared turn of a message: in a room its words without the mention and with the sender's name before
        them (unless it is a command), the older message it replies to, what it brings, its thread, when it was sent.
        A room's message comes this far only when it mentions or replies to mnemo (Rooms.route): it is addressed."""
        group, content = route.kind == "group", event.source.get("content", {})
        said = without_mention(text, self.me, self.rooms.names(room)) if group else text
        others = forwarded(content)  # someone else's words (where the client says so) run no command
        command = commands and said.lstrip()[:1] in ("!", "/") and not others
        if group and not command:
            said = f"{self.rooms.sender_name(room, event.sender)}: {said}"
        if not group:
            self.rooms.wrote_in(event.sender, room.room_id)
        quoted = await self._quoted(room.room_id, content) if replied_to(content) and not command else None
        sent_at = event.server_timestamp / 1000 if event.server_timestamp else None  # origin_server_ts
        return Turn(room.room_id, route.scope, event.sender, said, event.event_id, event.event_id, group=group,
                    command=command, replayed=replayed, reply_to=event.event_id if group else None,
                    origin=event.event_id, quoted=quoted, addressed=True, attachment=attachment,
                    sent_at=sent_at, thread=thread_root(content),
                    title=(room.name or "") if group else "",  # a room's own name, never one made up
                    forwarded=others)

    async def _quoted(self, room_id: str, content: dict[str, Any]) -> Quoted | None:
        """The older message a reply replies to: asked of the homeserver, else read from the reply's fallback lines; a
        person's voice note by its event id, for the transcript logged for it (Channel._quote)."""
        target = replied_to(content)
        assert target is not None  # only a reply is asked for its quote
        event = await self.rooms.event(room_id, target)
        if isinstance(event, (RoomMessageText, RoomMessageEmote, RoomMessageNotice)):
            body = strip_reply_fallback(event.body) if replied_to(event.source.get("content", {})) else event.body
            return Quoted(body, event.sender == self.me) if body.strip() else None
        if isinstance(event, (RoomMessageAudio, RoomEncryptedAudio)) and event.sender != self.me:
            return Quoted("", False, ref=target)  # a voice note: its words are the transcript logged for it
        return quoted_fallback(str(content.get("body") or ""), self.me)
