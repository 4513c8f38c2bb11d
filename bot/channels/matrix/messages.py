"""What a Matrix message looks like to mnemo: its content, edits, splitting, mentions, and rate-limit waits.

Pure functions over plain data (event contents, ids, names), so they are tested without a homeserver.
"""
from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from nio import (
    ErrorResponse,
    Event,
    MatrixRoom,
    RoomEncryptedAudio,
    RoomEncryptedFile,
    RoomMemberEvent,
    RoomMessageAudio,
    RoomMessageFile,
)

from bot.channels.matrix.sizes import Fits, fits_anywhere
from bot.channels.sending import FLOOD_TRIES, MAX_FLOOD_WAIT, retry_wait
from bot.channels.splitting import Limit, first_part, split_text
from bot.exchange import Attachment, Button, Quoted, question_of
from bot.texts import t

MAX_MESSAGES = 3
# One message carries at most this much text, counted as matrix-nio writes it into JSON (outside ASCII: \uXXXX).
# An edit of it fits any event, encrypted too, with its new text and a short fallback (sizes.py); its HTML and its
# full fallback go along where they fit.
MESSAGE_CHARS = 16_000
MESSAGE_BYTES = 24_000
FALLBACK_CHARS = 200  # an edit's fallback for old clients, when the whole text does not fit twice
DEFAULT_FLOOD_WAIT = 5.0  # when M_LIMIT_EXCEEDED names no retry_after_ms
THUMBS_UP, THUMBS_DOWN = "👍", "👎"
KEYCAPS = tuple(f"{n}\ufe0f\u20e3" for n in range(1, 10)) + ("🔟",)
_ESCAPED = {'"': 2, "\\": 2, "\n": 2, "\r": 2, "\t": 2, "\b": 2, "\f": 2}


@dataclass(frozen=True)
class InThread:
    """Where an answer goes in a thread (m.thread): the thread's root, and the message it follows."""

    root: str
    last: str


# --- content ---------------------------------------------------------------------------------------


def to_html(text: str) -> str:
    """The formatted body of a text: escaped, **bold** kept as bold, newlines as <br>."""
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"<strong>\1</strong>", escaped)
    return escaped.replace("\n", "<br>")


def json_bytes(text: str) -> int:
    """The size of a text inside a Matrix event as matrix-nio writes it (ASCII JSON), without the quotes; never less
    than the homeserver's canonical JSON (UTF-8)."""
    return sum(_char_bytes(c) for c in text)


def _char_bytes(char: str) -> int:
    if char in _ESCAPED:
        return _ESCAPED[char]
    code = ord(char)
    if 0x20 <= code < 0x7F:
        return 1
    return 12 if code > 0xFFFF else 6  # \uXXXX; beyond the BMP two escaped halves


def voice_content(body: str, mime: str, size: int, seconds: float | None) -> dict[str, Any]:
    """An m.audio event's content for a spoken reply, flagged as a voice message (MSC3245), without its file."""
    info: dict[str, Any] = {"mimetype": mime, "size": size}
    audio: dict[str, Any] = {}
    if seconds is not None:
        info["duration"] = audio["duration"] = round(seconds * 1000)
    return {"msgtype": "m.audio", "body": body, "info": info, "org.matrix.msc1767.audio": audio,
            "org.matrix.msc3245.voice": {}}


def message_content(text: str, reply_to: str | None = None, fits: Fits = fits_anywhere,
                    thread: InThread | None = None) -> dict[str, Any]:
    """An m.text message with an HTML body beside the plain text (left out when the event would be too big).

    In a thread it goes into the thread: a reply there when `reply_to` is given, else with the fallback reply to the
    message it follows, for clients that show no threads.
    """
    plain: dict[str, Any] = {"msgtype": "m.text", "body": text}
    relation = relates_to(reply_to, thread)
    if relation:
        plain["m.relates_to"] = relation
    rich = {**plain, "format": "org.matrix.custom.html", "formatted_body": to_html(text)}
    return rich if fits(rich) else plain


def relates_to(reply_to: str | None, thread: InThread | None) -> dict[str, Any]:
    """A message's relation: a reply, a message in a thread (a reply there, or its fallback), or none ({})."""
    if thread is not None:
        return {"rel_type": "m.thread", "event_id": thread.root, "is_falling_back": reply_to is None,
                "m.in_reply_to": {"event_id": reply_to or thread.last}}
    return {"m.in_reply_to": {"event_id": reply_to}} if reply_to else {}


def edit_content(event_id: str, text: str, fits: Fits = fits_anywhere) -> dict[str, Any]:
    """An edit (m.replace) of the bot's message `event_id` to `text`, with the '* ' fallback for old clients.

    The richest that fits the event: the whole text as fallback and its HTML; else a short fallback; else no HTML.
    """
    short = f"* {text[:FALLBACK_CHARS]}…" if len(text) > FALLBACK_CHARS else f"* {text}"
    relation = {"rel_type": "m.replace", "event_id": event_id}
    tries = [(f"* {text}", message_content(text)), (short, message_content(text)),
             (short, message_content(text, fits=lambda _: False))]
    for fallback, new in tries:
        content = {"msgtype": "m.text", "body": fallback, "m.new_content": new, "m.relates_to": relation}
        if fits(content):
            return content
    return content


def transaction_id(*parts: str) -> str:
    """A transaction id derived from what is sent in answer to what (the same parts: the same id).

    The homeserver keeps one event per transaction id of a device, so a send repeated after a crash
    gets the first event back instead of showing the message twice.
    """
    return "mnemo." + hashlib.sha256("\x1f".join(parts).encode("utf-8", errors="surrogatepass")).hexdigest()[:40]


def with_bang_commands(text: str, commands: Iterable[str]) -> str:
    """The text with its command names written as Matrix clients let them through ('/help' becomes '!help').

    Element and other clients take a leading '/' as their own command, so in Matrix mnemo's commands are
    typed with '!'. Only known command names standing on their own are changed, never paths or links.
    """
    names = sorted(set(commands), key=len, reverse=True)
    if not names:
        return text
    pattern = rf"(?<![\w/:.~-])/({'|'.join(map(re.escape, names))})(?![\w/-])"
    return re.sub(pattern, r"!\1", text)


def reaction_content(event_id: str, key: str) -> dict[str, Any]:
    """An m.reaction annotating an event with a key."""
    return {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}


def split_message(text: str, chars: int = MESSAGE_CHARS, size: int = MESSAGE_BYTES) -> list[str]:
    """Split text into messages of at most `chars` characters and `size` JSON bytes, at paragraphs, lines or words."""
    return split_text(text, (Limit(chars), Limit(size, _char_bytes)))


def first_message(text: str, chars: int = MESSAGE_CHARS, size: int = MESSAGE_BYTES) -> str:
    """The first message split_message makes of a text, the rest not measured (a streamed preview shows it)."""
    return first_part(text, (Limit(chars), Limit(size, _char_bytes)))


def fit_messages(bubbles: Sequence[str], limit: int = MAX_MESSAGES) -> tuple[str, ...]:
    """At most `limit` bubbles; the last one takes the rest."""
    parts = tuple(b for b in bubbles if b.strip())
    if len(parts) <= limit:
        return parts
    return parts[: limit - 1] + ("\n\n".join(parts[limit - 1 :]),)


# --- reactions as buttons ----------------------------------------------------------------------------


def normalize_key(key: str) -> str:
    """A reaction key without variation selectors and skin tones (👍🏽 counts as 👍)."""
    return re.sub("[\ufe0f\U0001f3fb-\U0001f3ff]", "", key)


def reaction_choices(buttons: Sequence[Sequence[Button]], lang: str) -> tuple[list[tuple[str, str]], str]:
    """The reactions standing for buttons, as (emoji, data), and the line that explains them.

    A yes/no question's row (a rule, a profile fact) becomes 👍/👎 with its legend, in a direct room as in a group
    (a 👍 may be read as a mere nod; the legend says what it does); any other buttons become numbered keycaps
    1️⃣ … 🔟 with a line naming each (more than ten are left out).
    A held tool call's row too: it acts outside mnemo's memory, so only the reaction its legend names runs
    it, never a 👍 given as a plain acknowledgement.
    """
    rows = [tuple(row) for row in buttons if row]
    question = question_of(tuple(rows))
    if len(rows) == 1 and len(rows[0]) == 2 and question and not question.startswith("tool:") \
            and rows[0][0].data.split(":")[1] == "yes" and rows[0][1].data.split(":")[1] == "no":
        legend = f"{t(lang, 'react_with')} {THUMBS_UP} {rows[0][0].label} · {THUMBS_DOWN} {rows[0][1].label}"
        return [(THUMBS_UP, rows[0][0].data), (THUMBS_DOWN, rows[0][1].data)], legend
    pairs: list[tuple[str, str]] = []
    lines: list[str] = []
    for row in rows:
        labels = []
        for button in row:
            if len(pairs) == len(KEYCAPS):
                continue
            pairs.append((KEYCAPS[len(pairs)], button.data))
            labels.append(f"{pairs[-1][0]} {button.label}")
        if labels:
            lines.append(" · ".join(labels))
    if not pairs:
        return [], ""
    return pairs, "\n".join([t(lang, "react_with")] + lines)


# --- incoming ----------------------------------------------------------------------------------------


def strip_reply_fallback(body: str) -> str:
    """A reply's own text, without the quoted '> ' lines that older clients put in front."""
    lines = body.split("\n")
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip() or body


_FALLBACK_HEAD = re.compile(r"^> ?(?:\* )?<(@[^>\s]+)> ?(.*)$")


def quoted_fallback(body: str, me: str) -> Quoted | None:
    """The older message as the '> <@sender> …' lines older clients put in front of a reply quote it; None without.

    Only where the homeserver cannot give the event itself (it is gone, or mnemo may not see it).
    """
    lines = body.split("\n")
    head = _FALLBACK_HEAD.match(lines[0]) if lines else None
    if head is None:
        return None
    quoted = [head.group(2)]
    for line in lines[1:]:
        if not line.startswith(">"):
            break
        quoted.append(line[1:].removeprefix(" "))
    text = "\n".join(quoted).strip()
    return Quoted(text, head.group(1) == me) if text else None


def emoji_key(emoji: str) -> str:
    """A reaction key as Matrix clients write it: a heart or a hand alone gets its emoji form ('❤' as '❤️')."""
    return emoji + "\ufe0f" if len(emoji) == 1 and ord(emoji) < 0x1F000 else emoji


def is_voice(event: Event) -> bool:
    """Whether an event is a voice note: m.audio (a voice message, MSC3245, is one too) or a file of audio, plain or
    encrypted."""
    if isinstance(event, (RoomMessageAudio, RoomEncryptedAudio)):
        return True
    if isinstance(event, (RoomMessageFile, RoomEncryptedFile)):
        return media_mime(event.source.get("content", {})).startswith("audio/")
    return False


def media_mime(content: dict[str, Any]) -> str:
    """A media event's MIME type, as its info says ('' when it says none)."""
    info = content.get("info")
    mime = info.get("mimetype") if isinstance(info, dict) else None
    return mime if isinstance(mime, str) else ""


def voice_note(content: dict[str, Any]) -> Attachment:
    """A voice note as its event describes it, before it is downloaded (no data yet; size 0 when it says none)."""
    info = content.get("info")
    size, duration = (info.get("size"), info.get("duration")) if isinstance(info, dict) else (None, None)
    seconds = duration / 1000 if isinstance(duration, (int, float)) else None
    return Attachment("voice", b"", media_mime(content), size if isinstance(size, int) else 0,
                      str(content.get("filename") or ""), seconds)


def media_of(event: Event) -> Attachment | None:
    """What a media event brings, before it is downloaded: a voice note (m.audio, a file of audio) or a document (any
    other m.file: a PDF, a text), without its data; None for other media (a video)."""
    content = event.source.get("content", {})
    if is_voice(event):
        return voice_note(content)
    if not isinstance(event, (RoomMessageFile, RoomEncryptedFile)):
        return None
    info = content.get("info")
    size = info.get("size") if isinstance(info, dict) else None
    return Attachment("document", b"", media_mime(content), size if isinstance(size, int) else 0,
                      str(content.get("filename") or content.get("body") or ""))


def media_caption(content: dict[str, Any]) -> str:
    """A media event's caption: its body when a file name stands beside it (MSC2530), else '' (the body is the
    file's name then, or 'Voice message')."""
    body, filename = content.get("body"), content.get("filename")
    if isinstance(body, str) and isinstance(filename, str) and filename and body != filename:
        return strip_reply_fallback(body) if replied_to(content) else body
    return ""


def replied_to(content: dict[str, Any], falling_back: bool = False) -> str | None:
    """The event id a message replies to, or None; in a thread, the fallback reply to its last message only when
    `falling_back` (it is no reply the person chose)."""
    relates = content.get("m.relates_to")
    reply = relates.get("m.in_reply_to") if isinstance(relates, dict) else None
    event_id = reply.get("event_id") if isinstance(reply, dict) else None
    if not falling_back and isinstance(relates, dict) and relates.get("is_falling_back") is True:
        return None
    return event_id if isinstance(event_id, str) else None


def thread_root(content: dict[str, Any]) -> str | None:
    """The root of the thread (m.thread) a message was written in, or None."""
    relates = content.get("m.relates_to")
    if not isinstance(relates, dict) or relates.get("rel_type") != "m.thread":
        return None
    root = relates.get("event_id")
    return root if isinstance(root, str) else None


def edited_text(content: dict[str, Any]) -> str:
    """The new words of an edit (its m.new_content's body), '' when it carries none."""
    new = content.get("m.new_content")
    return str(new.get("body") or "") if isinstance(new, dict) else ""


def forwarded(content: dict[str, Any]) -> bool:
    """Whether a message is marked as a forward of someone else's words (MSC2723's m.forwarded, which some clients
    set). Element forwards a plain copy of the content: such a forward cannot be told from the person's own words."""
    return isinstance(content.get("m.forwarded"), dict)


def is_edit(content: dict[str, Any]) -> bool:
    """Whether a message edits an earlier one (m.replace)."""
    relates = content.get("m.relates_to")
    return isinstance(relates, dict) and relates.get("rel_type") == "m.replace"


def _name_patterns(me: str, names: Sequence[str]) -> list[str]:
    """Regexes for the ways people write the bot's name: its id, '@name' anywhere, 'name:' or 'name,' first."""
    patterns = [re.escape(me)]
    for name in {n.strip() for n in names if n and n.strip()}:
        escaped = re.escape(name)
        patterns.append(rf"(?<![\w@])@{escaped}(?!\w)")
        patterns.append(rf"^{escaped}\s*[:,]")
    return patterns


def mentions(content: dict[str, Any], me: str, names: Sequence[str]) -> bool:
    """Whether a message mentions the bot: m.mentions, a pill (matrix.to link), its id, '@name', or 'name:' first.

    `names` are the bot's display name and localpart. Quoted reply fallbacks do not count.
    """
    ids = content.get("m.mentions", {}).get("user_ids") if isinstance(content.get("m.mentions"), dict) else None
    if isinstance(ids, list) and me in ids:
        return True
    formatted = re.sub(r"<mx-reply>.*?</mx-reply>", "", str(content.get("formatted_body") or ""), flags=re.DOTALL)
    if f"matrix.to/#/{me}" in unquote(formatted):
        return True
    body = strip_reply_fallback(str(content.get("body") or ""))
    return any(re.search(p, body, re.IGNORECASE) for p in _name_patterns(me, names))


def without_mention(body: str, me: str, names: Sequence[str]) -> str:
    """A group message without the bot's name where it addresses the bot."""
    cleaned = body
    for pattern in _name_patterns(me, names):
        cleaned = re.sub(rf"[ \t]*,?[ \t]*(?:{pattern})[,:]?", " ", cleaned, flags=re.IGNORECASE)
    return re.sub(r"[ \t]+([.,!?;:])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned)).strip()


def group_text(body: str, me: str, names: Sequence[str], sender: str) -> str:
    """A group message as the engine sees it: who wrote it, without the mention of the bot."""
    return f"{sender}: {without_mention(body, me, names)}"


def localpart(user_id: str) -> str:
    """'anna' for '@anna:example.org'."""
    return user_id.removeprefix("@").split(":", 1)[0]


def fresh_events(events: Sequence[Event], me: str) -> list[Event]:
    """The events after the bot's own invite or join in this batch (history before it is not answered)."""
    start = 0
    for i, event in enumerate(events):
        if isinstance(event, RoomMemberEvent) and event.state_key == me and event.membership in ("invite", "join") \
                and event.prev_membership not in ("invite", "join"):
            start = i + 1
            break
    return list(events[start:])


def dm_partner(room: MatrixRoom | None, me: str) -> str | None:
    """The other member of a direct room (exactly two members, joined or invited), else None."""
    if room is None or me not in room.users or len(room.users) != 2:
        return None
    return next(u for u in room.users if u != me)


# --- rate limits -------------------------------------------------------------------------------------


def limited(response: object) -> float | None:
    """The seconds the homeserver asked to wait when the response is M_LIMIT_EXCEEDED (5 s when it names none)."""
    if not isinstance(response, ErrorResponse) or response.status_code not in ("M_LIMIT_EXCEEDED", "429"):
        return None
    return (response.retry_after_ms or 0) / 1000 or DEFAULT_FLOOD_WAIT


def flood_wait(response: object, attempt: int, tries: int = FLOOD_TRIES,
               longest: float = MAX_FLOOD_WAIT) -> float | None:
    """Seconds to wait before sending the same request again after M_LIMIT_EXCEEDED; None: do not retry.

    None when the response is no rate limit, when `attempt` was the last of `tries`, or when the
    homeserver asks for longer than `longest` (the failure is then reported instead of waited out).
    """
    return retry_wait(limited(response), attempt, tries, longest)


def failure(response: object) -> str:
    """A short description of a failed response."""
    if isinstance(response, ErrorResponse):
        return f"{response.status_code or ''} {response.message}".strip()
    return repr(response)
