"""The settings the conversation engine needs (bot.settings fills them at start-up)."""
from __future__ import annotations

from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from bot.conversation.crisis import CrisisDetector, PatternDetector
from memory import Thresholds


@dataclass(frozen=True)
class EngineConfig:
    """The settings the engine needs."""

    companion_id: str = "mnemo"
    companion_name: str = "Mnemo"
    persona: str = ""
    language: str = "de"
    zone: ZoneInfo = field(default_factory=lambda: ZoneInfo("Europe/Berlin"))
    recent_messages: int = 12
    max_message_chars: int = 4000
    relevance_floor: float | None = None
    crisis_country: str = "DE"
    crisis_detector: CrisisDetector = field(default_factory=PatternDetector)  # app.py: patterns, classifier, moderation
    crisis_judge: bool = False  # a close call of the fast layers is also judged by the background model, in parallel
    crisis_judge_timeout: float = 3.0  # seconds the turn waits for the judge at most (from when it was asked)
    use_tools: bool = True
    extraction: str = "after_reply"
    extraction_quiet_seconds: float = 120.0
    profile_consent: bool = False
    admission: Thresholds | None = field(default_factory=Thresholds)  # None: every extracted note is stored
    rate_limit_per_minute: float = 0.0  # messages a user may send per minute (and at once); 0: no limit
    reactions_per_day: int = 3  # emoji the companion puts on a person's messages in their day; 0: none
    vision: bool = False  # the chat model sees pictures: a photo goes to it with its caption
    image_max_bytes: int = 10_000_000  # a larger picture is refused (channels do not download it)
    image_max_pixels: int = 25_000_000  # a picture with more pixels (width x height) is refused
    document_max_bytes: int = 10_000_000  # a larger document is not read (and not downloaded by the channel)
    document_max_pages: int = 50  # a PDF with more pages is not read
    document_max_chars: int = 20_000  # the model gets a document's text up to here (the person is told)
    document_max_seconds: float = 20.0  # a document whose text is not read within this time is refused
    voice_max_bytes: int = 20_000_000  # a larger voice note is refused (and not downloaded by the channel)
    voice_max_seconds: float = 300.0  # a longer voice note (as the messenger tells) is refused before it is heard
    voice_keep: bool = False  # a heard voice note's audio kept as its message's file (voice/recordings.py)
    speech_max_chars: int = 600  # a spoken reply says the whole sentences that fit in this many characters
