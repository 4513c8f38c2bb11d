"""Generated ChatGPT exports of any size for tests and benches, written as a stream (never whole in memory)."""
from __future__ import annotations

import io
import json
import random
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

START = datetime(2023, 1, 1, tzinfo=UTC).timestamp()
TOPICS = ["meine Schwester Miriam", "den Umzug nach Leipzig", "meinen Halbmarathon", "unseren Kater Moritz",
          "die neue Stelle im Krankenhaus", "das Töpfern", "meinen Vater", "die Steuererklärung"]
PERSON_LINES = ["Ich habe heute über {t} nachgedacht.", "Kannst du mir bei {t} helfen?",
                "Gestern war es schwierig mit {t}.", "Ich freue mich auf {t}, aber ich bin auch nervös."]
MODEL_LINES = ["Das klingt, als wäre dir {t} wichtig. ", "Hier sind ein paar Gedanken zu {t}: ",
               "Lass uns {t} Schritt für Schritt angehen. "]


def chatgpt_conversation(index: int, messages: int, rng: random.Random) -> dict[str, Any]:
    """One conversation in the export's shape: a root, a hidden system message, then person and model taking turns,
    with one abandoned branch (an edited question) when it is long enough."""
    at = START + index * 3600 * 7
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": ["sys"]}}
    mapping["sys"] = {"id": "sys", "parent": "root", "children": [], "message": {
        "id": "sys", "author": {"role": "system"}, "create_time": None,
        "content": {"content_type": "text", "parts": [""]},
        "metadata": {"is_visually_hidden_from_conversation": True}, "recipient": "all"}}
    parent = "sys"
    for i in range(messages):
        role = "user" if i % 2 == 0 else "assistant"
        topic = rng.choice(TOPICS)
        if role == "user":
            text = rng.choice(PERSON_LINES).format(t=topic) + f" (#{index}.{i})"
        else:
            text = rng.choice(MODEL_LINES).format(t=topic) + "Ein ausführlicher Gedanke dazu. " * rng.randint(5, 30)
        node = f"n{i}"
        at += rng.randint(5, 300)
        mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
            "id": node, "author": {"role": role, "name": None, "metadata": {}}, "create_time": at,
            "update_time": None, "content": {"content_type": "text", "parts": [text]},
            "status": "finished_successfully", "weight": 1.0, "metadata": {}, "recipient": "all"}}
        mapping[parent]["children"].append(node)
        if i == 2:  # an edited question: the earlier version stays in the tree as a dead branch
            mapping["old"] = {"id": "old", "parent": parent, "children": [], "message": {
                "id": "old", "author": {"role": "user"}, "create_time": at - 1,
                "content": {"content_type": "text", "parts": ["die alte Fassung"]}, "metadata": {}, "recipient": "all"}}
            mapping[parent]["children"].insert(0, "old")
        parent = node
    key = f"00000000-0000-4000-8000-{index:012d}"
    return {"title": f"Gespräch {index}", "create_time": START + index * 3600 * 7, "update_time": at,
            "mapping": mapping, "current_node": parent, "conversation_id": key, "id": key}


def write_chatgpt(out: IO[str], conversations: int, messages: int = 16, seed: int = 7,
                  broken_at: int | None = None) -> None:
    """Write an export of `conversations` conversations; `broken_at` puts damaged JSON into that conversation."""
    rng = random.Random(seed)
    out.write("[")
    for index in range(conversations):
        if index:
            out.write(", ")
        text = json.dumps(chatgpt_conversation(index, messages, rng), ensure_ascii=False)
        out.write(text if index != broken_at else text[: len(text) // 2] + '"parts": [}' + text[len(text) // 2:])
    out.write("]")


def chatgpt_file(path: Path, conversations: int, messages: int = 16, *, zipped: bool = False,
                 broken_at: int | None = None) -> Path:
    """A generated conversations.json (or the zip with it) at path."""
    if not zipped:
        with path.open("w", encoding="utf-8") as out:
            write_chatgpt(out, conversations, messages, broken_at=broken_at)
        return path
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, \
            archive.open("conversations.json", "w", force_zip64=True) as member, \
            io.TextIOWrapper(member, encoding="utf-8") as out:
        write_chatgpt(out, conversations, messages, broken_at=broken_at)
    return path
