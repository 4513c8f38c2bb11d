"""The companion's emoji on a person's message: whether it may react now, which emoji the model chose, the line that
offers it (naming the companion's mood towards the person); and which of the person's reactions are kept as feedback.
All pure."""
from __future__ import annotations

import re
import unicodedata
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

# The emojis the companion may put on a message: a few that say how it feels, each one Telegram lets bots use
# (its fixed list, telegram.constants.ReactionEmoji); Matrix takes any, mnemo keeps to these there too.
REACTIONS = ("👍", "❤", "🔥", "🥰", "👏", "😁", "🤔", "🤯", "😢", "🎉", "🤩", "🙏", "👌", "😍", "💯", "🤣", "😇",
             "🤗", "🫡", "😴", "👀", "🤝")
FEEDBACK_CHARS = 32  # a reaction key longer than this is no emoji (Matrix lets any text be one)
# what an emoji is made of: symbols, modifiers (skin tones), marks (variation selectors, the keycap), joiners, digits
_EMOJI_PARTS = frozenset({"So", "Sk", "Sm", "Mn", "Me", "Cf", "Nd"})
_VARIANTS = re.compile("[\ufe0f\U0001f3fb-\U0001f3ff]")  # variation selector and skin tones: '❤️' is '❤'

OFFER = ("You may put one emoji reaction on the person's message, as a friend does in a messenger, when it shows how "
         "you feel about it: write [REACT: emoji] anywhere in your reply, with exactly one of "
         + " ".join(REACTIONS) + ". Most messages need none.")
MOOD = " Your mood towards the person now: {mood}. If you react, the emoji fits this mood."


def offer_line(mood: str) -> str:
    """The offer to react, naming the companion's mood towards the person (the reflection's) when it has one."""
    mood = " ".join(mood.split()).rstrip(".")
    return OFFER + (MOOD.format(mood=mood) if mood else "")


def chosen_reaction(content: str) -> str:
    """The emoji of a [REACT: …] marker when it is exactly one of REACTIONS; '' for text, several, or any other."""
    key = _VARIANTS.sub("", content.strip())
    return key if key in REACTIONS else ""


def may_react(per_day: int, given_today: int, *, group: bool, addressed: bool, crisis: bool) -> bool:
    """Whether the companion may react to this message: reactions on, fewer than `per_day` given in the person's day
    so far, never in a crisis, and in a group only when it was addressed."""
    return per_day > 0 and given_today < per_day and not crisis and (addressed or not group)


def day_of(now: float, zone: ZoneInfo) -> tuple[float, float]:
    """The person's local day around `now`, as [start, end) unix times."""
    start = datetime.combine(datetime.fromtimestamp(now, zone).date(), time(), zone)
    return start.timestamp(), datetime.combine(start.date() + timedelta(days=1), time(), zone).timestamp()


def feedback_emoji(key: str) -> str:
    """A person's reaction key as kept for the reflection: emoji only ('' for words, which a Matrix reaction may carry,
    and for anything too long to be one emoji), so no one writes sentences into the reflection through it."""
    key = key.strip()
    if not 0 < len(key) <= FEEDBACK_CHARS:
        return ""
    return key if all(unicodedata.category(c) in _EMOJI_PARTS for c in key) else ""
