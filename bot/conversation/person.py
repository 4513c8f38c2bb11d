"""Who mnemo speaks with: the person's language and the country of their help numbers, from their preferences, else
from their time zone, else the deployment's settings (a pure decision and its one read)."""
from __future__ import annotations

from dataclasses import dataclass

from bot.conversation.help_lines import country_of_zone, language_of_code
from memory import MemoryStore, Preferences, Scope, is_group_scope


@dataclass(frozen=True)
class Person:
    """What a scope's words are fitted to."""

    lang: str  # "de" or "en"
    country: str  # ISO code whose help numbers a crisis brings ('' : findahelpline.com)


def person_from(prefs: Preferences, language: str, country: str) -> Person:
    """The person as their preferences say, the deployment's `language` and `country` where they chose none; the
    country follows their own time zone before the deployment's."""
    from_zone = country_of_zone(prefs.timezone) if prefs.timezone else None
    return Person(prefs.language or language, prefs.country or from_zone or country)


async def person_of(store: MemoryStore, scope: Scope, language: str, country: str) -> Person:
    """The scope's person (`person_from`), read from their preferences."""
    return person_from(await store.preferences.get(scope), language, country)


async def meet(store: MemoryStore, scope: Scope, code: str | None) -> str | None:
    """At a person's first contact, keep the language their messenger names ('en-US' -> 'en') as theirs; the
    language kept, or None (a language mnemo does not speak, a group, one chosen before, or no first contact)."""
    lang = language_of_code(code)
    if lang is None or is_group_scope(scope.user_id):
        return None
    if (await store.preferences.get(scope)).language:
        return None
    if await store.messages.last_user_message(scope) is not None:
        return None  # someone mnemo knows: they keep the language they were spoken to in
    await store.preferences.set(scope, "language", lang)
    return lang
