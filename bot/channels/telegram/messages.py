"""What a Telegram message looks like to mnemo: whose memory it is, whether it is meant for mnemo, what it replies to,
how to split it, which reactions it carries."""
from __future__ import annotations

import json
import re
from collections.abc import Sequence

from telegram import (
    Chat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    MessageEntity,
    ReactionType,
    ReactionTypeEmoji,
    User,
)
from telegram.constants import ChatType, ReactionEmoji

from bot.channels.splitting import Limit, split_text
from bot.commands.catalog import BY_NAME
from bot.exchange import Button, Quoted
from memory import group_scope

MESSAGE_LIMIT = 4096  # Telegram's limit for one message, counted here in UTF-16 code units to be safe
GROUPS = (ChatType.GROUP, ChatType.SUPERGROUP)
BOT_REACTIONS = frozenset(e.value for e in ReactionEmoji)  # the only emojis Telegram lets a bot react with


def scope_user(telegram_user_id: int) -> str:
    """The engine's user id for a Telegram user."""
    return f"tg:{telegram_user_id}"


def telegram_id(user_id: str) -> int:
    """The Telegram user id in 'tg:<id>' or '<id>'; ValueError for anything else (a group scope, a Matrix id)."""
    bare = user_id.removeprefix("tg:")
    if not bare.lstrip("-").isdigit():
        raise ValueError(f"not a Telegram user id: {user_id!r}")
    return int(bare)


def chat_scope(chat: Chat, user: User) -> str:
    """Whose memory a message belongs to: the user's in a private chat, the group's in a group."""
    return group_scope("tg", chat.id) if chat.type in GROUPS else scope_user(user.id)


def utf16_units(char: str) -> int:
    """How many UTF-16 code units a character takes (Telegram counts a message's length in them)."""
    return 2 if ord(char) > 0xFFFF else 1


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split text into messages of at most `limit` UTF-16 units, preferring paragraph, line and word boundaries."""
    return split_text(text, (Limit(limit, utf16_units),))


def keyboard(rows: Sequence[Sequence[Button]]) -> InlineKeyboardMarkup | None:
    """Inline buttons for rows of Button; None when there are none."""
    markup = [[InlineKeyboardButton(b.label, callback_data=b.data) for b in row] for row in rows if row]
    return InlineKeyboardMarkup(markup) if markup else None


def face(text: str, markup: InlineKeyboardMarkup | None, *, pending: bool = False) -> str:
    """What a message displays, as one string: its text and its buttons (to skip an edit that changes nothing).

    A pending face is what an edit in flight is about to show: it never equals a shown one, so an edit is
    not skipped on its account, but a replay knows how far the message may already have got.
    """
    rows = [[[b.text, b.callback_data] for b in row] for row in markup.inline_keyboard] if markup else []
    return json.dumps([text, rows, "pending"] if pending else [text, rows], ensure_ascii=False)


def face_text(shown: str) -> str:
    """The text part of a `face`."""
    return str(json.loads(shown)[0])


def addressed_to_bot(message: Message, bot_id: int, username: str) -> bool:
    """Whether a group message is meant for the bot: it (or a picture's caption) @mentions it, replies to it, is a
    /command@bot, or a bare /command of mnemo's own (Telegram hands those to the bots of a group too)."""
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    handle = f"@{username}".lower()
    for entity, text in (message.parse_entities() | message.parse_caption_entities()).items():
        if entity.type == MessageEntity.MENTION and text.lower() == handle:
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user is not None and entity.user.id == bot_id:
            return True
        if entity.type == MessageEntity.BOT_COMMAND and text.lower().endswith(handle):
            return True
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0 and text[1:].lower() in BY_NAME:
            return True
    return False


def group_text(text: str, username: str, sender: str) -> str:
    """A group message as the engine sees it: who wrote it, without the @mention of the bot."""
    cleaned = re.sub(rf"[ \t]*,?[ \t]*@{re.escape(username)}\b[,:]?", " ", text, flags=re.IGNORECASE)
    cleaned = re.sub(r"[ \t]+([.,!?;:])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned)).strip()
    return f"{sender}: {cleaned}"


def quoted_of(message: Message, bot_id: int) -> Quoted | None:
    """The older message a message replies to: the part the person quoted, else its text or caption; a voice note
    without caption by its id (`Quoted.ref`, as `message_ref` names it), for its logged transcript; None without."""
    replied = message.reply_to_message
    if replied is None:
        return None
    part = message.quote.text if message.quote is not None else ""
    text = part or replied.text or replied.caption or ""
    by_bot = replied.from_user is not None and replied.from_user.id == bot_id
    if not text.strip() and (replied.voice or replied.audio or replied.video_note) and not by_bot:
        return Quoted("", False, ref=f"{replied.chat.id}:{replied.message_id}")  # its transcript, as logged
    if not text.strip():  # a sticker, a photo without caption, a forum topic's opening
        return None
    return Quoted(text, by_bot)


def forwarded(message: Message) -> bool:
    """Whether a message is someone else's words the person forwarded (a forward from a user, a chat or a channel, or
    a channel's post Telegram forwarded into its discussion group)."""
    return message.forward_origin is not None or bool(message.is_automatic_forward)


def emojis(reactions: Sequence[ReactionType]) -> list[str]:
    """The plain emojis among a message's reactions (custom and paid ones are left out)."""
    return [r.emoji for r in reactions if isinstance(r, ReactionTypeEmoji)]


def reaction_change(old: Sequence[ReactionType], new: Sequence[ReactionType]) -> tuple[list[str], list[str]]:
    """What a person's reactions on a message changed to: the emojis added, the emojis taken back."""
    before, after = emojis(old), emojis(new)
    return [e for e in after if e not in before], [e for e in before if e not in after]


def bot_reaction(emoji: str) -> str | None:
    """The emoji as Telegram lets a bot react with it ('❤️' is its '❤'), or None when it is not on the list."""
    for candidate in (emoji, emoji.replace("\ufe0f", ""), emoji + "\ufe0f"):
        if candidate in BOT_REACTIONS:
            return candidate
    return None
