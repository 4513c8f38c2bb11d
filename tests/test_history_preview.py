"""The preview before an import: what was found, what reading it would cost, in German and English."""
from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

from bot.history.model import HistoryConversation, HistoryMessage
from bot.history.preview import Assumptions, render, tally
from bot.history.readers import read_history

DATA = Path(__file__).parent / "data" / "history"
AT = datetime(2023, 3, 2, 10, 0, tzinfo=UTC)


def conversation(key: str, *speakers: str, text: str = "x" * 40) -> HistoryConversation:
    return HistoryConversation("chatgpt", key, key, tuple(HistoryMessage(s, text, AT) for s in speakers))  # type: ignore[arg-type]


def test_counts_and_date_range_of_an_export() -> None:
    preview = tally(read_history(DATA / "telegram" / "result_full.json"), daily_budget=200_000)

    assert (preview.source, preview.conversations, preview.person_messages, preview.other_messages) == (
        "telegram", 3, 5, 5)
    assert (preview.first, preview.last) == (datetime(2023, 3, 1, 18, 6, 10, tzinfo=UTC),
                                             datetime(2024, 6, 1, 12, 0, tzinfo=UTC))


def test_the_estimate_follows_its_assumptions() -> None:
    assume = Assumptions(batch=40, clip=1200, chars_per_token=4, prompt_chars=4000, answer_tokens=300)
    # 50 of the person's messages, clipped to 1,200 characters: 20 fill a call's 24,000 characters, so 3 calls;
    # only the person's words are sent, never the other side's
    long_talk = conversation("a", *(["person", "other"] * 50), text="y" * 2000)
    only_other = conversation("b", "other", "other")  # nothing of the person: no call
    short = [conversation(f"s{i}", "person", "other", "person") for i in range(10)]  # 20 messages share one call

    preview = tally([long_talk, only_other, *short], 0, assume)

    assert preview.calls == 3 + 1
    assert preview.input_tokens == math.ceil((4 * 4000 + 50 * (1200 + 12) + 20 * (40 + 12)) / 4)
    assert preview.output_tokens == 4 * 300
    assert preview.budget_share is None and preview.days is None


def test_budget_share_and_days() -> None:
    preview = tally([conversation("a", *(["person", "other"] * 100))], daily_budget=2_000)

    assert preview.budget_share == preview.tokens / 2_000
    assert preview.days == math.ceil(preview.tokens / 2_000) > 1


def test_rendered_in_german_and_english() -> None:
    preview = tally(read_history(DATA / "chatgpt" / "export.zip"), daily_budget=1_000_000)
    german, english = render(preview, "de").splitlines(), render(preview, "en").splitlines()

    assert german[0] == ("Gefunden: 2 Gespräche aus ChatGPT vom 02.03.2023 bis 15.01.2024, mit 4 Nachrichten von dir "
                         "und 4 von der Gegenseite.")
    assert german[1].startswith(f"Geschätzter Aufwand: etwa {preview.tokens:,} Token in einem Aufruf".replace(",", "."))
    assert german[2] == "Das sind 0 % des täglichen Budgets für Hintergrundarbeit (1.000.000 Token)."
    assert german[3] == "Bisher ist nichts gespeichert und kein Modell gefragt."
    assert english[0] == ("Found: 2 conversations from ChatGPT, 2023-03-02 to 2024-01-15, with 4 messages from you "
                          "and 4 from the other side.")
    assert english[1].startswith(f"Estimated cost: about {preview.tokens:,} tokens in one call")  # both share it


def test_rendered_over_several_days_without_a_cap_and_empty() -> None:
    big = tally([conversation("a", *(["person", "other"] * 400), text="z" * 1000)], daily_budget=50_000)

    assert f"verteilt sich auf mindestens {big.days} Tage" in render(big, "de")
    assert f"reading it takes at least {big.days} days" in render(big, "en")
    assert "kein tägliches Budget gesetzt" in render(tally([conversation("b", "person")]), "de")
    assert render(tally([]), "de") == "In dieser Datei habe ich keine Gespräche gefunden – es gibt nichts einzulesen."
    assert render(tally([]), "en") == "I found no conversations in this file – there is nothing to import."
