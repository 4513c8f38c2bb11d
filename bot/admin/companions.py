"""Creating a companion: name, optional age, a character template, four sliders and a relationship wish.

The background model writes the core personality once, at creation; it is stored and never rewritten.
"""
from __future__ import annotations

import argparse
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bot.errors import ConfigError, LLMBadOutput
from memory import Companion
from scheduler.relationship_rules import DEFAULT_WISH, WISHES

if TYPE_CHECKING:
    from bot.settings import Settings
    from memory import MemoryStore
    from scheduler.ports import Writer

TEMPLATES: dict[str, str] = {
    "warm": "warm, attentive and encouraging; notices small things and comes back to them",
    "witty": "quick, playful and ironic; loves wordplay, never at the person's expense",
    "calm": "calm, grounded and patient; a steady presence that does not rush",
    "curious": "curious and eager; asks about details and loves learning what the person knows",
    "dry": "dry, understated and honest; few words, deadpan humour, kind underneath",
}
SLIDERS = ("humour", "directness", "care", "stubbornness")
DEFAULT_SLIDER = 5
CORE_CHARS = 2000
_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")

INSTRUCTIONS = """You write the core personality of a companion that chats with one person in a messenger.
Write it in the second person ("You are …"), in English, 120 to 220 words, plain text without headings.
Describe character, values, how it talks (tone, humour, how direct it is, how it shows care), what it
holds on to when it disagrees, and a few small likes and dislikes. Follow the template and the sliders
(0 = none, 10 = very strong) closely. The companion knows it is an AI: give it no invented human daily
life, body, job or past. Do not describe the relationship with the person; that grows on its own."""


@dataclass(frozen=True)
class CompanionSpec:
    """What an operator chooses when creating a companion."""

    id: str
    name: str
    age: int | None = None
    template: str = "warm"
    sliders: Mapping[str, int] = field(default_factory=lambda: {s: DEFAULT_SLIDER for s in SLIDERS})
    wish: str = DEFAULT_WISH


def validate(spec: CompanionSpec) -> None:
    """Raise ConfigError (one sentence) when a choice is not allowed."""
    if not _ID.fullmatch(spec.id):
        raise ConfigError("The companion id may use 1 to 64 characters from A-Z, a-z, 0-9, _, . and -.")
    if not spec.name.strip():
        raise ConfigError("The companion needs a name.")
    if spec.age is not None and not 1 <= spec.age <= 120:
        raise ConfigError("The companion's age must lie between 1 and 120.")
    if spec.template not in TEMPLATES:
        raise ConfigError(f"Unknown template {spec.template!r} (use {', '.join(TEMPLATES)}).")
    if set(spec.sliders) != set(SLIDERS) or not all(0 <= v <= 10 for v in spec.sliders.values()):
        raise ConfigError(f"Set each of {', '.join(SLIDERS)} between 0 and 10.")
    if spec.wish not in WISHES:
        raise ConfigError(f"Unknown relationship wish {spec.wish!r} (use {', '.join(WISHES)}).")


def material(spec: CompanionSpec) -> str:
    """The choices, as the model reads them."""
    lines = [f"Name: {spec.name}", f"Apparent age: {spec.age}" if spec.age else "Apparent age: not given",
             f"Template: {spec.template} – {TEMPLATES[spec.template]}"]
    lines += [f"{name}: {spec.sliders[name]}/10" for name in SLIDERS]
    return "\n".join(lines)


async def write_core(writer: Writer, spec: CompanionSpec) -> str:
    """Ask the background model once for the core personality."""
    text = (await writer(INSTRUCTIONS, material(spec), max_tokens=700)).strip()
    if not text:
        raise LLMBadOutput("the background model wrote an empty personality")
    return text[:CORE_CHARS]


async def create(store: MemoryStore, writer: Writer, spec: CompanionSpec) -> Companion:
    """Validate, write the core personality (one model call) and store the companion."""
    validate(spec)
    if await store.companions.get(spec.id) is not None:
        raise ConfigError(f"A companion with the id {spec.id!r} already exists; its personality stays as it is.")
    core = await write_core(writer, spec)
    return await store.companions.add(Companion(spec.id, spec.name.strip(), spec.age, spec.template,
                                                dict(spec.sliders), spec.wish, core))


def _slider(raw: str) -> int:
    value = int(raw)
    if not 0 <= value <= 10:
        raise argparse.ArgumentTypeError("use 0 to 10")
    return value


def add_arguments(companion: argparse.ArgumentParser) -> None:
    """The arguments of `mnemo companion` (its name and help are `bot.cli`'s)."""
    actions = companion.add_subparsers(dest="action", required=True)
    make = actions.add_parser("create", help="create a companion; the background model writes its personality once")
    make.add_argument("--id", required=True, help="the id the bot runs as (MNEMO_COMPANION_ID)")
    make.add_argument("--name", required=True)
    make.add_argument("--age", type=int)
    make.add_argument("--template", choices=tuple(TEMPLATES), default="warm")
    for name in SLIDERS:
        make.add_argument(f"--{name}", type=_slider, default=DEFAULT_SLIDER, help="0-10 (default 5)")
    make.add_argument("--wish", choices=tuple(WISHES), default=DEFAULT_WISH,
                      help="the closest the relationship may become (default: friendship)")
    actions.add_parser("list", help="list the companions of this deployment")


def spec_from_args(args: argparse.Namespace) -> CompanionSpec:
    """The spec the command line describes."""
    return CompanionSpec(args.id, args.name, args.age, args.template, {s: getattr(args, s) for s in SLIDERS}, args.wish)


async def run_command(settings: Settings, args: argparse.Namespace) -> int:
    """`mnemo companion create|list`."""
    from bot.admin import ops
    from bot.app import make_models
    from bot.llm.writer import LLMWriter

    store = await ops.open_store(settings)
    try:
        if args.action == "list":
            for c in await store.companions.list():
                print(f"{c.id}\t{c.name}\t{c.template}\t{c.wish}")
            return 0
        chat, background = make_models(settings)
        try:
            companion = await create(store, LLMWriter(background), spec_from_args(args))
        finally:
            for llm in {id(chat): chat, id(background): background}.values():
                close = getattr(llm, "aclose", None)
                if close:
                    await close()
        print(f"created {companion.id} ({companion.name}); run it with MNEMO_COMPANION_ID={companion.id}")
        print(companion.core)
        return 0
    finally:
        await store.close()
