"""/people and the people buttons: who mnemo knows from the user's life; rename, merge, forget (after a yes)."""
from __future__ import annotations

from datetime import UTC, tzinfo

from bot.commands.invocation import Call, Pressed
from bot.exchange import Button, Reply, item_id
from bot.learning import forgetting
from bot.llm.port import LLM
from bot.quoting import clip
from bot.texts import counted, t
from memory import MemoryStore, NotFound, Person, PersonDate, Scope, YearlyDate, name_key, new_processing

LIST_BUTTONS = 10


def headline(person: Person, number: int, lang: str) -> str:
    """'#3 Miriam – Schwester (auch: meine Schwester)', with the user's own number of the person."""
    line = f"#{number} {person.name if person.named else t(lang, 'people_unnamed')}"
    if person.relation:
        line += f" – {person.relation}"
    if person.aliases:
        line += f" ({t(lang, 'people_also', names=', '.join(person.aliases))})"
    return line


def date_text(date: YearlyDate, lang: str) -> str:
    """'🎂 Geburtstag 3.3.1986', '💍 Anniversary 6/12' (the year only when known)."""
    icon = {"birthday": "🎂", "anniversary": "💍"}.get(date.kind, "📅")
    year = f"{date.year}" if date.year else ""
    if lang == "de":
        day = f"{date.day}.{date.month}.{year}"
    else:
        day = f"{date.month}/{date.day}" + (f"/{year}" if year else "")
    return f"{icon} {t(lang, 'date_' + date.kind)} {day}"


def dates_of(dates: list[PersonDate], person: Person, lang: str) -> str:
    """A person's dates on one line, or ''."""
    return " · ".join(date_text(d.date, lang) for d in dates if d.person_id == person.id)


def display_name(person: Person) -> str:
    """The name to use in a sentence: the name, or the description while there is none."""
    return person.name if person.named else (person.relation or person.name)


async def details(store: MemoryStore, scope: Scope, person: Person, lang: str, zone: tzinfo = UTC) -> Reply:
    """One person: names, relation and its history (its dates in `zone`, the person's), relations to others, and
    what is known about them."""
    number = await store.numbers.of(scope, "person", person.id)
    lines = [headline(person, number, lang)]
    for relation, _start, end in await store.people.history(scope, person.id):
        if end is not None:
            lines.append(t(lang, "people_before", relation=relation, date=f"{end.astimezone(zone):%d.%m.%Y}"))
    lines += [t(lang, "people_relation", a=link.a, relation=link.relation, b=link.b)
              for link in await store.people.links(scope, person.id)]
    lines += [date_text(d.date, lang) for d in await store.person_dates.of(scope, person.id)]
    facts = await store.people.facts(scope, person.id)
    lines += ([t(lang, "people_facts")] + [f"• {clip(n.text, 200)}" for n in facts]) if facts \
        else [t(lang, "people_no_facts")]
    forget = Button(f"{t(lang, 'people_forget_button')} #{number}", f"people:forget:{number}")
    return Reply(("\n".join(lines),), buttons=((forget,),))


async def listing(store: MemoryStore, scope: Scope, lang: str) -> Reply:
    """Everyone mnemo knows, oldest first, with a button per person for more."""
    people = await store.people.all(scope)
    if not people:
        return Reply((t(lang, "people_empty"),))
    numbers = await store.numbers.of_many(scope, "person", [p.id for p in people])
    dates = await store.person_dates.all(scope)
    heads = [" · ".join(filter(None, (headline(p, numbers[p.id], lang), dates_of(dates, p, lang)))) for p in people]
    lines = [t(lang, "people_head"), *heads, "", t(lang, "people_usage")]
    rows = tuple((Button(f"#{numbers[p.id]} {clip(display_name(p), 24)}", f"people:show:{numbers[p.id]}"),)
                 for p in people[:LIST_BUTTONS])
    return Reply(("\n".join(lines),), buttons=rows)


async def forget_question(store: MemoryStore, scope: Scope, person: Person, number: int,
                          lang: str) -> tuple[str, tuple[tuple[Button, ...], ...]]:
    """The yes/cancel question before a person is forgotten, with how many facts go with them."""
    count = len(await store.people.facts(scope, person.id, 1000))
    text = t(lang, "people_forget_confirm", name=display_name(person), notes=counted(lang, count, "notes"))
    return text, ((Button(t(lang, "people_forget_yes"), f"people:forgetyes:{number}"),
                   Button(t(lang, "cancel"), "cancel")),)


async def people(call: Call, args: str) -> Reply:
    """/people, /people 3, /people Miriam, /people rename 3 Mia, /people merge 3 5, /people forget 3."""
    store, scope, lang = call.store, call.scope, call.lang
    words = args.split()
    try:
        if not words:
            return await listing(store, scope, lang)
        verb = words[0].lower()
        if verb in ("rename", "umbenennen") and len(words) >= 3 and (renamed := item_id(words[1])) is not None:
            before = await by_number(store, scope, renamed)
            after = await store.people.rename(scope, before.id, " ".join(words[2:]))
            return Reply((t(lang, "people_renamed", old=display_name(before), new=after.name),))
        keep, other = (item_id(w) for w in (words + ["", ""])[1:3])
        if verb in ("merge", "zusammenführen") and len(words) == 3 and keep is not None and other is not None:
            merged = await store.people.merge(scope, (await by_number(store, scope, keep)).id,
                                              (await by_number(store, scope, other)).id)
            return Reply((t(lang, "people_merged", name=display_name(merged), names=", ".join(merged.aliases)),))
        if verb in ("forget", "vergessen") and len(words) == 2 and (forgotten := item_id(words[1])) is not None:
            person = await by_number(store, scope, forgotten)
            text, buttons = await forget_question(store, scope, person, forgotten, lang)
            return Reply((text,), buttons=buttons)
        return await details(store, scope, await find(store, scope, args), lang, await call.engine.zone_for(scope))
    except NotFound:
        return Reply((t(lang, "people_unknown"),))


async def by_number(store: MemoryStore, scope: Scope, number: int) -> Person:
    """The person behind the user's own number; NotFound when the scope has none under it."""
    return await store.people.get(scope, await store.numbers.item(scope, "person", number))


async def find(store: MemoryStore, scope: Scope, query: str) -> Person:
    """A person by the user's number ('3', '#3') or by any of their names; NotFound otherwise."""
    if (number := item_id(query)) is not None:
        return await by_number(store, scope, number)
    key = name_key(query)
    for person in await store.people.all(scope):
        if key in {name_key(n) for n in (person.name, *person.aliases)} or key == name_key(person.relation):
            return person
    raise NotFound(f"person {query!r}")


async def press(call: Call, fields: list[str]) -> Pressed | None:
    """'people:show|forget|forgetyes:<number>' within the presser's scope (NotFound for others' numbers).

    Forgetting a person also rewrites what was written about them (with the background model).
    """
    if len(fields) != 2 or not fields[1].isdigit():
        return None
    store, scope, lang = call.store, call.scope, call.lang
    person = await by_number(store, scope, int(fields[1]))
    if fields[0] == "show":
        shown = await details(store, scope, person, lang, await call.engine.zone_for(scope))
        return Pressed("", shown.bubbles[0], shown.buttons)
    if fields[0] == "forget":
        text, buttons = await forget_question(store, scope, person, int(fields[1]), lang)
        return Pressed("", text, buttons)
    if fields[0] == "forgetyes":
        done = await forget(store, scope, person, lang, call.engine.background)
        return Pressed(done, done)
    return None


async def forget(store: MemoryStore, scope: Scope, person: Person, lang: str, llm: LLM,
                 reason: str = "/people forget") -> str:
    """Forget a person for good with their facts, then rewrite the diary, thoughts and the rest without them.

    The chat's yes button and the web page both forget this way; returns the sentence saying what went.
    """
    processing = new_processing("forget")
    async with store.learning_locks.hold(scope):  # no learning run on any worker writes them back meanwhile
        what = forgetting.of_person(person, await store.people.facts(scope, person.id, 1000, include_closed=True))
        forgotten, count = await store.people.forget(scope, person.id, reason=reason)
        copies = await forgetting.forget(store, llm, scope, what, processing=processing, reason=reason, final=True)
    return forgetting.with_copies(t(lang, "people_forgotten", name=display_name(forgotten),
                                         notes=counted(lang, count, "notes")), copies, lang)
