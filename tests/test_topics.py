"""Whether a reply raised an open topic, as a table of cases."""
from __future__ import annotations

import pytest

from bot.conversation.topics import topic_raised


@pytest.mark.parametrize("reply, topic, raised", [
    ("Wie war eigentlich der Zahnarzt?", "Zahnarzt", True),
    ("Wie war der Zahnarzttermin gestern?", "Zahnarzt", False),  # whole words only
    ("Wie lief das Vorstellungsgespräch bei der Bank?", "Vorstellungsgespräch bei der Bank am Dienstag", True),
    ("Wie war die Bank?", "Vorstellungsgespräch bei der Bank am Dienstag", False),
    ("Schönen Abend noch!", "Konzert", False),
    ("How did the interview go?", "job interview", True),
])
def test_topic_raised(reply: str, topic: str, raised: bool) -> None:
    assert topic_raised(reply, topic) is raised
