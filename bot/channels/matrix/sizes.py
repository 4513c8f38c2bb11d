"""How large a Matrix event becomes on the wire, encrypted or not, so that no event mnemo sends is over 64 KiB.

The homeserver refuses an event whose whole JSON is over 65,536 bytes (canonical JSON, with the ids, hashes and
signatures it adds: 575 bytes in a new room on Synapse, measured by tests/test_matrix_sizes.py). In an encrypted room
the content is Megolm ciphertext: the event written as JSON by matrix-nio (every character outside ASCII as \\uXXXX),
padded to 16 bytes, framed, signed, and written in base64, so it grows by a third. An edit carries the text twice
(its fallback and its new content) and maybe its HTML: what fits is decided per event, from these sizes.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

MAX_EVENT_BYTES = 65_536  # the spec's limit on a whole event (Synapse: MAX_PDU_SIZE)
ENVELOPE_BYTES = 2_560  # kept free for what the homeserver adds around the content (long ids, many earlier events)
CONTENT_BYTES = MAX_EVENT_BYTES - ENVELOPE_BYTES
MEGOLM_FRAME = 1 + 6 + 4 + 8 + 64  # version, message index, length of the ciphertext, MAC, signature (upper bounds)
_KEY, _DEVICE = "k" * 43, "d" * 64  # a curve25519 key or session id in base64; a device id, longer than any seen

Fits = Callable[[dict[str, Any]], bool]  # whether a message's content makes an event the homeserver takes


def content_bytes(content: dict[str, Any]) -> int:
    """The size of a content as the homeserver measures it (canonical JSON: compact, UTF-8)."""
    text = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8", errors="surrogatepass"))


def encrypted_bytes(event_type: str, content: dict[str, Any], room_id: str) -> int:
    """The size of the content of the m.room.encrypted event matrix-nio makes of this one (an upper bound)."""
    plain = len(json.dumps({"content": content, "type": event_type, "room_id": room_id}, separators=(",", ":")))
    ciphertext = math.ceil(((plain // 16 + 1) * 16 + MEGOLM_FRAME) * 4 / 3)  # base64 without padding
    outer: dict[str, Any] = {"algorithm": "m.megolm.v1.aes-sha2", "sender_key": _KEY, "ciphertext": "",
                             "session_id": _KEY, "device_id": _DEVICE}
    if "m.relates_to" in content:  # matrix-nio copies the relation outside the ciphertext
        outer["m.relates_to"] = content["m.relates_to"]
    return content_bytes(outer) + ciphertext


def event_bytes(content: dict[str, Any], room_id: str, encrypted: bool, event_type: str = "m.room.message") -> int:
    """The size of an event's content as sent to the room: encrypted where the room is."""
    return encrypted_bytes(event_type, content, room_id) if encrypted else content_bytes(content)


def fits_in(room_id: str, encrypted: bool) -> Fits:
    """Whether a message's content, sent to this room, stays within what the homeserver takes."""
    return lambda content: event_bytes(content, room_id, encrypted) <= CONTENT_BYTES


def fits_anywhere(content: dict[str, Any]) -> bool:
    """Whether a content fits an unencrypted room (a room not known yet counts as one)."""
    return content_bytes(content) <= CONTENT_BYTES
