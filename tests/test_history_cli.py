"""`mnemo import-history`: the preview calls no model and stores nothing; bad input is one sentence, exit code 2 and
nothing stored; without --yes it asks; a run queues candidates, a second run of the same file does nothing; a spent
token budget pauses with exit code 3 and the next run goes on; reading draws a bar of the bytes; the Claude and
Telegram exports of tests/data/history/ queue the person's statements with their days."""
from __future__ import annotations

import argparse
import asyncio
import json
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bot.admin.history_import import PAUSED, import_history
from bot.cli import main
from bot.settings import Settings, load_settings
from bot.texts import t
from memory.search.embedder import make_embedder
from memory.store import MemoryStore
from tests.fakes.history_exports import chatgpt_file
from tests.fakes.llm import Call, ScriptedLLM
from tests.test_history_import import LINE, finder

EMBEDDER = "tests.fakes.embedder:FakeEmbedder"
DATA = Path(__file__).parent / "data" / "history"


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Settings:
    """The deployment's settings, with tg:42 a person who has written to mnemo."""
    monkeypatch.setenv("MNEMO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MNEMO_EMBEDDING_MODEL", EMBEDDER)
    loaded = load_settings(str(tmp_path / "none.env"))
    asyncio.run(wrote(loaded, "tg:42"))
    return loaded


async def wrote(settings: Settings, user: str) -> None:
    """`user` has written to the companion (their scope exists, as after a first message)."""
    async with await MemoryStore.open(settings.data_dir, make_embedder(EMBEDDER)) as store:
        await store.scope(settings.companion_id, user)


async def users(settings: Settings) -> list[str]:
    """The user ids of every scope in the data folder."""
    async with await MemoryStore.open(settings.data_dir, make_embedder(EMBEDDER)) as store, store.db.reading() as tx:
        return [row[0] for row in await tx.fetchall("SELECT user_id FROM scopes ORDER BY id")]


def cli(tmp_path: Path, *args: str) -> int:
    return main(["--env-file", str(tmp_path / "none.env"), "import-history", *args])


def namespace(file: Path, **values: object) -> argparse.Namespace:
    base: dict[str, object] = {"file": file, "user": "tg:42", "format": None, "preview": False, "since": None,
                               "person": None, "chat": None, "yes": True}
    return argparse.Namespace(**(base | values))


async def rows(settings: Settings) -> tuple[int, int]:
    """(imports, candidates) stored in the data folder."""
    async with await MemoryStore.open(settings.data_dir, make_embedder(EMBEDDER)) as store, store.db.reading() as tx:
        imports = (await tx.fetchone("SELECT count(*) FROM history_imports"))[0]
        candidates = (await tx.fetchone("SELECT count(*) FROM review_candidates"))[0]
    return imports, candidates


async def queued(settings: Settings) -> list[tuple[str, str, str, str, str]]:
    """(source, conversation title, day said, text, quote) of every queued candidate, oldest first."""
    async with await MemoryStore.open(settings.data_dir, make_embedder(EMBEDDER)) as store, store.db.reading() as tx:
        found = await tx.fetchall("SELECT i.source, c.conversation_title, c.said_at, c.text, c.quote FROM"
                                  " review_candidates c JOIN history_imports i ON i.id = c.import_id ORDER BY c.id")
    return [(source, title, f"{datetime.fromtimestamp(said, UTC):%Y-%m-%d}", text, quote)
            for source, title, said, text, quote in found]


def every_line(call: Call) -> str:
    """The fake background model: each line of the person's in the transcript is a fact."""
    facts = [{"text": f"Anna schrieb: {text}", "importance": 5, "source_ids": [int(n)]}
             for n, text in LINE.findall(call.messages[-1].content)]
    return json.dumps({"facts": facts, "content": [], "profile": []})


def test_the_preview_counts_and_stores_nothing(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    export = chatgpt_file(tmp_path / "conversations.json", 5, messages=4)
    assert cli(tmp_path, str(export), "--user", "tg:42", "--preview") == 0
    out = capsys.readouterr().out
    assert "5" in out and "ChatGPT" in out
    assert asyncio.run(rows(settings)) == (0, 0)


def test_reading_a_large_file_draws_a_bar_of_the_bytes_read(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    export = chatgpt_file(tmp_path / "conversations.json", 200, messages=16)  # 2.2 MB: a bar step after each MiB
    model = ScriptedLLM("background")
    assert asyncio.run(import_history(settings, namespace(export, preview=True), llm=model)) == 0
    out = capsys.readouterr().out
    recognised, counted, preview = out.split("\n", 2)  # once to recognise the export, once to count, each a bar
    for line in (recognised, counted):
        steps = line.split("\r")[1:]  # the bar redrawn on its line
        assert steps[0] == f"[{'#' * 13}{'.' * 17}] 1.0/2.2 MB" and steps[-1] == f"[{'#' * 30}] 2.2/2.2 MB"
        assert len(steps) == 3
    assert "200" in preview and model.calls == []
    assert asyncio.run(rows(settings)) == (0, 0)


@pytest.mark.parametrize("content", ['{"hello": "world"}', "", "[{\"title\": \"x\", \"mapping\": "])
def test_bad_input_is_one_sentence_exit_2_and_nothing_stored(settings: Settings, tmp_path: Path, capsys,  # type: ignore[no-untyped-def]
                                                            content: str) -> None:
    bad = tmp_path / "conversations.json"
    bad.write_text(content)
    assert cli(tmp_path, str(bad), "--user", "tg:42", "--yes") == 2
    err = capsys.readouterr().err
    assert err.startswith("mnemo: ") and err.count("\n") == 1
    assert asyncio.run(rows(settings)) == (0, 0)


def test_damage_in_the_middle_stops_before_anything_is_stored(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    export = chatgpt_file(tmp_path / "conversations.json", 30, messages=4, broken_at=20)
    model = ScriptedLLM("background")
    assert asyncio.run(import_history(settings, namespace(export), llm=model)) == 2
    assert capsys.readouterr().err.startswith("mnemo: conversations.json: Das JSON ist bei etwa Byte ")
    assert model.calls == [] and asyncio.run(rows(settings)) == (0, 0)
    assert cli(tmp_path, str(export), "--user", "tg:42", "--yes") == 2


def test_without_yes_it_asks_and_a_no_stores_nothing(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    export = chatgpt_file(tmp_path / "conversations.json", 3, messages=4)
    model = ScriptedLLM("background")
    asked: list[str] = []
    code = asyncio.run(import_history(settings, namespace(export, yes=False), llm=model,
                                      ask=lambda q: asked.append(q) or "n"))
    assert code == 1 and asked and model.calls == [] and asyncio.run(rows(settings)) == (0, 0)


def test_an_import_queues_and_the_same_file_again_does_nothing(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    export = chatgpt_file(tmp_path / "conversations.json", 12, messages=6)
    model = ScriptedLLM("background")
    model.responder = finder
    assert asyncio.run(import_history(settings, namespace(export, since=date(2023, 1, 2)), llm=model)) == 0
    out = capsys.readouterr().out
    assert "Fertig: 8 Gespräche gelesen" in out and "8/8" in out  # the bar (8 since 2 January), then the summary
    calls = len(model.calls)
    imports, candidates = asyncio.run(rows(settings))
    assert calls > 0 and imports == 1 and candidates > 0
    assert all("Ein ausführlicher Gedanke" not in c.prompt for c in model.calls)  # the model's side never
    assert asyncio.run(import_history(settings, namespace(export), llm=model)) == 0
    again = capsys.readouterr().out
    said = again.split("\n")[1]  # after the bar of the reading that recognised it
    assert said.startswith("conversations.json ist schon am ") and f"({candidates} Vorschläge); es gibt nichts" in said
    assert len(model.calls) == calls and asyncio.run(rows(settings)) == (imports, candidates)


def test_a_spent_budget_pauses_with_exit_3_and_the_next_run_goes_on(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, tmp_path: Path, capsys,  # type: ignore[no-untyped-def]
) -> None:
    export = chatgpt_file(tmp_path / "conversations.json", 4, messages=4)
    capped = settings.model_copy(update={"background_tokens_per_day": 100})

    async def spend() -> None:
        async with await MemoryStore.open(settings.data_dir, make_embedder(EMBEDDER)) as store:
            today = datetime.now(capped.zone).strftime("%Y-%m-%d")
            await store.usage.add(today, "background", 90, 20)

    asyncio.run(spend())
    model = ScriptedLLM("background")
    model.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    assert asyncio.run(import_history(capped, namespace(export), llm=model)) == PAUSED
    assert "Starte denselben Befehl morgen noch einmal" in capsys.readouterr().out and model.calls == []
    assert asyncio.run(import_history(settings, namespace(export, preview=True), llm=model)) == 0
    previewed = capsys.readouterr().out
    assert "ChatGPT" in previewed and "weiter." not in previewed and model.calls == []  # a preview continues nothing
    since = date(2020, 1, 1)  # another option than the first run's: said, and the first run's kept
    assert asyncio.run(import_history(settings, namespace(export, since=since), llm=model)) == 0  # no cap: goes on
    resumed = capsys.readouterr().out
    assert "Ich lese conversations.json weiter (schon gelesen: 0 Gespräche)." in resumed and model.calls
    assert "Es geht mit den Optionen weiter, mit denen es begann (--since 2020-01-01 statt (keine))." in resumed


def test_a_claude_export_queues_the_persons_statements(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedLLM("background")
    model.responder = every_line
    assert asyncio.run(import_history(settings, namespace(DATA / "claude" / "conversations_2024.json"),
                                      llm=model)) == 0
    assert "Fertig: 1 Gespräch gelesen (1 Aufruf an das Hintergrundmodell)" in capsys.readouterr().out
    assert all("Wie viele Kilometer" not in c.prompt for c in model.calls)  # Claude's side never
    title = "Laufplan für den Halbmarathon"
    assert asyncio.run(queued(settings)) == [
        ("claude", title, "2024-04-03", "Anna schrieb: Ich laufe im Oktober meinen ersten Halbmarathon in Leipzig. "
         "Kannst du mir einen Plan machen?", "Ich laufe im Oktober meinen ersten Halbmarathon in Leipzig. Kannst du "
         "mir einen Plan machen?"),
        ("claude", title, "2024-04-03", "Anna schrieb: [file: laeufe_maerz.csv]",
         "[file: laeufe_maerz.csv]\nEtwa 20 km. Hier ist meine Laufuhr-Auswertung."),
    ]


def test_a_telegram_chat_export_queues_the_chosen_persons_statements(  # type: ignore[no-untyped-def]
    settings: Settings, tmp_path: Path, capsys,
) -> None:
    model = ScriptedLLM("background")
    model.responder = every_line
    export = DATA / "telegram" / "result_chat.json"
    assert asyncio.run(import_history(settings, namespace(export, person="Anna Beispiel"), llm=model)) == 0
    assert "Fertig: 2 Gespräche gelesen" in capsys.readouterr().out
    assert all("Leckerlis" not in c.prompt and "Tagesschau" not in c.prompt for c in model.calls)  # Miriam's, forwarded
    assert [(day, quote) for source, title, day, text, quote in asyncio.run(queued(settings))] == [
        ("2023-03-01", "Danke fürs Telefonieren! Ich habe die Zusage für die Wohnung in der Südvorstadt 🎉"),
        ("2023-03-01", "[sticker 😍]"),
        ("2023-03-01", "[photo] So sieht der Balkon aus"),  # stored neutral; shown in the person's language
        ("2023-03-02", "Unser Kater Moritz kommt natürlich mit."),
    ]
    assert {(source, title) for source, title, *_ in asyncio.run(queued(settings))} == {("telegram", "Miriam")}
    assert asyncio.run(import_history(settings, namespace(export, person="Anna Beispiel"), llm=model)) == 0
    assert "es gibt nichts zu tun" in capsys.readouterr().out and len(asyncio.run(queued(settings))) == 4


def test_a_user_without_prefix_or_who_never_wrote_is_refused_before_anything(  # type: ignore[no-untyped-def]
    settings: Settings, tmp_path: Path, capsys,
) -> None:
    export = chatgpt_file(tmp_path / "conversations.json", 3, messages=4)
    model = ScriptedLLM("background")
    assert cli(tmp_path, str(export), "--user", "42", "--yes") == 1  # the prefix forgotten: tg:42 has written
    err = capsys.readouterr().err
    assert err == (f"{t('de', 'import_unknown_user', user='42', companion='mnemo')} Gemeint ist wohl tg:42.\n")
    assert asyncio.run(import_history(settings, namespace(export, user="tg:1001"), llm=model)) == 1  # never wrote
    assert "„tg:1001“ hat noch nie mit mnemo geschrieben" in capsys.readouterr().err
    assert model.calls == [] and asyncio.run(rows(settings)) == (0, 0)
    assert asyncio.run(users(settings)) == ["tg:42"]  # no user made up


def test_the_same_export_as_zip_then_as_json_is_recognised(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    export = chatgpt_file(tmp_path / "conversations.json", 4, messages=4)
    packed = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(packed, "w") as archive:
        archive.write(export, "conversations.json")
    model = ScriptedLLM("background")
    model.responder = finder
    assert asyncio.run(import_history(settings, namespace(packed), llm=model)) == 0
    calls, stored = len(model.calls), asyncio.run(rows(settings))
    capsys.readouterr()
    respaced = tmp_path / "again" / "conversations.json"  # taken out of the zip and saved again with other spacing
    respaced.parent.mkdir()
    respaced.write_text(json.dumps(json.loads(export.read_text()), indent=2, ensure_ascii=False))
    for again in (export, respaced, respaced.parent):
        assert asyncio.run(import_history(settings, namespace(again), llm=model)) == 0
        said = capsys.readouterr().out.split("\n")[1]
        assert said.startswith(f"{again.name} hat denselben Inhalt wie chatgpt-export.zip, das am ")
    assert len(model.calls) == calls and asyncio.run(rows(settings)) == stored


def test_the_import_speaks_english_when_the_deployment_does(settings: Settings, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    english = settings.model_copy(update={"language": "en"})
    export = chatgpt_file(tmp_path / "conversations.json", 2, messages=4)
    model = ScriptedLLM("background")
    model.responder = finder
    assert asyncio.run(import_history(english, namespace(export), llm=model)) == 0
    assert "Done: 2 conversations read (1 call to the background model)" in capsys.readouterr().out
    assert asyncio.run(import_history(english, namespace(export), llm=model)) == 0
    assert "conversations.json was imported on " in capsys.readouterr().out
    (tmp_path / "empty.json").write_bytes(b"")
    assert asyncio.run(import_history(english, namespace(tmp_path / "empty.json"), llm=model)) == 2
    assert capsys.readouterr().err == "mnemo: empty.json: the file is empty\n"
    assert asyncio.run(import_history(settings, namespace(tmp_path / "empty.json"), llm=model)) == 2
    assert capsys.readouterr().err == "mnemo: empty.json: Die Datei ist leer\n"
