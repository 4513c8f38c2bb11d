"""Reading the exports written for the tests: the right messages, the right speaker, the original times in UTC."""
from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from bot.errors import HistoryError
from bot.history.readers import detect_format, read_history

DATA = Path(__file__).parent / "data" / "history"


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def said(path: Path | str, **kwargs: object) -> list[list[tuple[str, str, datetime]]]:
    """Every conversation as (speaker, text, time) triples."""
    return [[(m.speaker, m.text, m.at) for m in c.messages] for c in read_history(path, **kwargs)]  # type: ignore[arg-type]


# ChatGPT


@pytest.mark.parametrize("name", ["conversations.json", "export.zip"])
def test_chatgpt_reads_the_shown_branch_with_text_only(name: str) -> None:
    conversations = list(read_history(DATA / "chatgpt" / name))

    assert [(c.source, c.key, c.title) for c in conversations] == [
        ("chatgpt", "6400786c-6b4e-4f6e-9d5e-1b7ac1d0a001", "Umzug nach Leipzig"),
        ("chatgpt", "65a56a10-0000-4000-8000-00000000c003", "Kürbis"),  # the chat with only a system message is gone
    ]
    move = [(m.speaker, m.text, m.at) for m in conversations[0].messages]
    assert move == [
        ("person", "Ich ziehe im April nach Leipzig, weil meine Schwester Miriam dort wohnt. Hast du Tipps für die "
                   "Wohnungssuche?", datetime(2023, 3, 2, 10, 5, 11, 123000, tzinfo=UTC)),
        ("other", "Gern! In Leipzig lohnt es sich, früh bei Genossenschaften anzufragen. Wie hoch ist dein Budget?",
         datetime(2023, 3, 2, 10, 5, 19, 870000, tzinfo=UTC)),
        # the edited question, not its first version ("600 Euro") on the abandoned branch
        ("person", "Mein Budget ist 750 Euro warm, und ich brauche einen Balkon.", utc("2023-03-02 10:08:40")),
        # the empty message, the code sent to the python tool and its output are left out; both parts are kept
        ("other", "Das sind etwa 11,50 Euro pro Quadratmeter warm.\nFür 65 m² mit Balkon schau dich in Connewitz "
                  "und der Südvorstadt um.", utc("2023-03-02 10:08:55")),
        ("person", "[file: grundriss.png]\nDas ist der Grundriss der Wohnung in der Südvorstadt. Gefällt sie dir?",
         utc("2023-03-02 10:30:12")),
        ("other", "Der Grundriss ist gut geschnitten: das Bad ist innen, aber der Balkon geht nach Süden.",
         datetime(2023, 3, 2, 10, 41, 17, 330000, tzinfo=UTC)),
    ]
    assert all("Anna" not in m.text for m in conversations[0].messages)  # the hidden custom instructions
    # voice mode: the transcript; the message without a time gets the conversation's; the model's thoughts are out
    assert [(m.speaker, m.text, m.at) for m in conversations[1].messages] == [
        ("person", "Was koche ich heute mit Kürbis? Ich esse seit Januar vegetarisch.",
         datetime(2024, 1, 15, 17, 20, 0, 250000, tzinfo=UTC)),
        ("other", "Wie wäre es mit einer Kürbissuppe mit Ingwer?", utc("2024-01-15 17:20:09")),
    ]


def test_chatgpt_without_current_node_follows_the_newest_leaf(tmp_path: Path) -> None:
    export = json.loads((DATA / "chatgpt" / "conversations.json").read_text())
    del export[0]["current_node"]
    (tmp_path / "conversations.json").write_text(json.dumps(export))

    texts = [m.text for m in next(read_history(tmp_path / "conversations.json")).messages]

    assert "Mein Budget ist 750 Euro warm, und ich brauche einen Balkon." in texts
    assert "Mein Budget ist 600 Euro warm." not in texts


# Claude


def test_claude_2024_shape_text_and_attachments() -> None:
    assert said(DATA / "claude" / "conversations_2024.json") == [[
        ("person", "Ich laufe im Oktober meinen ersten Halbmarathon in Leipzig. Kannst du mir einen Plan machen?",
         datetime(2024, 4, 3, 18, 12, 44, 622871, tzinfo=UTC)),
        ("other", "Sehr gern! Wie viele Kilometer läufst du im Moment pro Woche?",
         datetime(2024, 4, 3, 18, 12, 51, 4112, tzinfo=UTC)),
        # the file's extracted content is not the person's words: only its name
        ("person", "[file: laeufe_maerz.csv]\nEtwa 20 km. Hier ist meine Laufuhr-Auswertung.",
         utc("2024-04-03 18:20:10")),
        ("other", "Mit 20 km pro Woche hast du eine gute Grundlage. Steigere um höchstens zehn Prozent pro Woche.",
         datetime(2024, 4, 3, 18, 30, 2, 552120, tzinfo=UTC)),
    ]]  # the empty reply and the empty conversation are gone


def test_claude_2025_shape_content_blocks_and_edited_branch() -> None:
    conversations = list(read_history(DATA / "claude" / "conversations_2025.json"))

    assert [(c.source, c.key, c.title) for c in conversations] == [
        ("claude", "5d1c0a77-88e2-4b7d-a2cf-2b9e00c0b001", "Geschenk für Miriam")]
    assert [(m.speaker, m.text, m.at) for m in conversations[0].messages] == [
        ("person", "Meine Schwester Miriam hat am 3. März Geburtstag. Sie liebt Keramik.",
         datetime(2025, 2, 27, 20, 1, 3, 540000, tzinfo=UTC)),
        ("other", "Ein Töpferkurs für zwei?", datetime(2025, 2, 27, 20, 1, 8, 211000, tzinfo=UTC)),  # no thinking
        ("person", "[file: wunschzettel.jpg]\nGute Idee, aber höchstens 40 Euro. Hier ist ihr Wunschzettel.",
         utc("2025-02-27 20:05:30")),  # the edit, not "Zu teuer."; its text only in the content block
        ("other", "Dann eine handgemachte Tasse vom Keramikmarkt am 1. März.",  # no tool call, no search result
         datetime(2025, 2, 27, 20, 9, 44, 900000, tzinfo=UTC)),
    ]


def test_claude_messages_with_role_instead_of_sender(tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_text(json.dumps([{
        "uuid": "c-1", "name": "Kurz", "created_at": "2024-09-01T09:00:00+02:00",
        "messages": [{"uuid": "1", "role": "user", "content": "Ich heiße Anna.",
                      "created_at": "2024-09-01T09:00:05+02:00"},
                     {"uuid": "2", "role": "assistant", "content": [{"type": "text", "text": "Hallo Anna!"}]}]}]))

    assert said(tmp_path / "conversations.json") == [[("person", "Ich heiße Anna.", utc("2024-09-01 07:00:05")),
                                                      ("other", "Hallo Anna!", utc("2024-09-01 07:00:05"))]]


# Telegram


@pytest.mark.parametrize("person", ["Anna Beispiel", "anna beispiel", "user111", "111"])
def test_telegram_chat_person_by_name_or_id(person: str) -> None:
    conversations = list(read_history(DATA / "telegram" / "result_chat.json", person=person))

    assert [(c.source, c.key, c.title) for c in conversations] == [
        ("telegram", "4815162342/1002", "Miriam"),  # the call (a service message) is no conversation's start
        ("telegram", "4815162342/1007", "Miriam"),  # the next evening, after a pause of more than eight hours
    ]
    assert [(m.speaker, m.text, m.at) for c in conversations for m in c.messages] == [
        ("person", "Danke fürs Telefonieren! Ich habe die Zusage für die Wohnung in der Südvorstadt 🎉",
         utc("2023-03-01 18:06:10")),
        ("other", "Wie schön! Schau mal: https://example.org/umzug – das Umzugsunternehmen war super.",
         utc("2023-03-01 18:07:45")),
        ("person", "[sticker 😍]", utc("2023-03-01 18:09:00")),
        ("person", "[photo] So sieht der Balkon aus", utc("2023-03-01 18:10:30")),
        ("other", "[voice message]", utc("2023-03-01 18:12:00")),
        # forwarded by the person, but not the person's words
        ("other", "[forwarded from Tagesschau] Zehn Tipps für den Umzug mit Katze", utc("2023-03-02 19:30:00")),
        ("person", "Unser Kater Moritz kommt natürlich mit.", utc("2023-03-02 19:31:12")),
        # the pinning (a service message) is left out
        ("other", "Moritz wird sich freuen, ich habe schon Leckerlis gekauft.", utc("2023-03-02 19:40:00")),
    ]


def test_telegram_the_other_participant_can_import_too() -> None:
    messages = [m for c in read_history(DATA / "telegram" / "result_chat.json", person="Miriam") for m in c.messages]

    assert [m.text for m in messages if m.speaker == "person"] == [
        "Wie schön! Schau mal: https://example.org/umzug – das Umzugsunternehmen war super.", "[voice message]",
        "Moritz wird sich freuen, ich habe schon Leckerlis gekauft."]


def test_telegram_chat_without_person_lists_the_participants() -> None:
    with pytest.raises(HistoryError, match=r"which participant you are.*Anna Beispiel \(user111\).*Miriam \(user222\)"):
        read_history(DATA / "telegram" / "result_chat.json")


def test_telegram_unknown_person_lists_the_participants() -> None:
    with pytest.raises(HistoryError) as caught:
        read_history(DATA / "telegram" / "result_chat.json", person="Bernd")

    assert str(caught.value) == ("result_chat.json: nobody called 'Bernd' writes here; the participants are: "
                                 "Anna Beispiel (user111, 5 messages), Miriam (user222, 3 messages)")
    assert caught.value.said("de") == ("result_chat.json: Hier schreibt niemand namens „Bernd“; die Beteiligten: "
                                       "Anna Beispiel (user111, 5 Nachrichten), Miriam (user222, 3 Nachrichten)")


def test_telegram_full_export_is_the_exporting_account_in_every_chat_but_channels() -> None:
    conversations = list(read_history(DATA / "telegram" / "result_full.json"))

    assert [(c.key, c.title) for c in conversations] == [
        ("4815162342/1002", "Miriam"), ("5551234/2", "Lauftreff Clara-Park"), ("111/7001", "Saved Messages")]
    group = [(m.speaker, m.text) for m in conversations[1].messages]
    assert group == [
        ("other", "Jonas K.: Sonntag 9 Uhr am Haupteingang?"),  # in a group, the others by name
        ("person", "Bin dabei! Ich trainiere für den Halbmarathon im Oktober."),
        ("other", "Lena: [file: route.gpx]"),
        ("other", "Lena: [poll: Tempo?]"),
    ]
    assert [m.speaker for m in conversations[2].messages] == ["person"]


def test_telegram_full_export_one_chat_chosen() -> None:
    chosen = list(read_history(DATA / "telegram" / "result_full.json", chat="lauftreff clara-park"))
    by_id = list(read_history(DATA / "telegram" / "result_full.json", chat="5551234"))

    assert [c.title for c in chosen] == [c.title for c in by_id] == ["Lauftreff Clara-Park"]
    channel = list(read_history(DATA / "telegram" / "result_full.json", chat="Tagesschau"))
    assert [m.text for c in channel for m in c.messages] == ["Nachrichten des Tages"]


def test_telegram_unknown_chat_names_the_chats() -> None:
    with pytest.raises(HistoryError, match="no chat called 'Yoga'; the chats are: Miriam, Lauftreff Clara-Park"):
        list(read_history(DATA / "telegram" / "result_full.json", chat="Yoga"))


def test_telegram_old_export_without_unix_times(tmp_path: Path) -> None:
    export = json.loads((DATA / "telegram" / "result_chat.json").read_text())
    for message in export["messages"]:
        message.pop("date_unixtime")
    (tmp_path / "result.json").write_text(json.dumps(export))

    first = next(read_history(tmp_path, person="user111")).messages[0]  # a folder: its result.json

    assert first.at == utc("2023-03-01 19:06:10")  # the local time as written, read as UTC


# Detection, since, progress


@pytest.mark.parametrize(("path", "fmt"), [
    ("chatgpt/conversations.json", "chatgpt"), ("chatgpt/export.zip", "chatgpt"),
    ("claude/conversations_2024.json", "claude"), ("claude/conversations_2025.json", "claude"),
    ("telegram/result_chat.json", "telegram"), ("telegram/result_full.json", "telegram")])
def test_detect_format(path: str, fmt: str) -> None:
    assert detect_format(DATA / path) == fmt


def test_a_format_given_that_the_file_is_not() -> None:
    with pytest.raises(HistoryError, match="this is a ChatGPT export, not Claude"):
        read_history(DATA / "chatgpt" / "export.zip", "claude")
    with pytest.raises(HistoryError, match="unknown format 'whatsapp'"):
        read_history(DATA / "chatgpt" / "export.zip", "whatsapp")


def test_an_export_without_conversations(tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_text("[]")

    with pytest.raises(HistoryError, match="holds no conversations"):
        detect_format(tmp_path / "conversations.json")
    assert list(read_history(tmp_path / "conversations.json", "chatgpt")) == []


def test_since_drops_older_messages_and_emptied_conversations() -> None:
    by_date = list(read_history(DATA / "chatgpt" / "conversations.json", since=date(2024, 1, 1)))
    by_time = said(DATA / "chatgpt" / "conversations.json", since=utc("2023-03-02 10:30:00"))
    naive = said(DATA / "telegram" / "result_full.json", since=datetime(2024, 3, 10, 8, 5))

    assert [c.title for c in by_date] == ["Kürbis"]
    assert [text for _, text, _ in by_time[0]] == [
        "[file: grundriss.png]\nDas ist der Grundriss der Wohnung in der Südvorstadt. Gefällt sie dir?",
        "Der Grundriss ist gut geschnitten: das Bad ist innen, aber der Balkon geht nach Süden."]
    assert len(by_time) == 2
    assert [m[1] for m in naive[0]][0] == "Bin dabei! Ich trainiere für den Halbmarathon im Oktober."
    keys = [c.key for c in read_history(DATA / "telegram" / "result_chat.json", person="111", since=date(2023, 3, 2))]
    assert keys == ["4815162342/1007"]  # the key stays the conversation's, whatever `since` cuts


def test_progress_reports_bytes_of_the_total() -> None:
    seen: list[tuple[int, int]] = []
    path = DATA / "chatgpt" / "conversations.json"

    list(read_history(path, progress=lambda done, total: seen.append((done, total))))

    size = path.stat().st_size
    assert seen and seen[-1] == (size, size)
    assert all(total == size and 0 < done <= size for done, total in seen)


def test_claude_zip(tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "data-2025-03-01.zip", "w") as archive:
        archive.writestr("users.json", '[{"uuid": "acc-91c2", "full_name": "Anna"}]')
        archive.writestr("projects.json", "[]")
        archive.write(DATA / "claude" / "conversations_2025.json", "conversations.json")

    assert detect_format(tmp_path / "data-2025-03-01.zip") == "claude"
    assert said(tmp_path / "data-2025-03-01.zip") == said(DATA / "claude" / "conversations_2025.json")
