"""Signs of suicidal thoughts or acute danger, in German and English (a pure detection function, the grammar's); the
help lines a crisis brings are in help_lines.py."""
from __future__ import annotations

from bot.conversation.crisis_grammar import grammar_says


def signals_crisis(text: str) -> bool:
    """True when the text says in so many words that someone wants to die, plans it, harms themselves, is hurt by
    someone else or is in acute danger: the grammar (`bot.conversation.crisis_grammar`; `bot.conversation.crisis`
    adds the classifier)."""
    return grammar_says(text)
