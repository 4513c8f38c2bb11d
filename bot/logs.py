"""Logging: one structured line per event on stderr (journald keeps it), secrets masked.

At INFO and above a record names ids, counts, kinds and lengths, never what a person wrote (a message, a note, a
fact, a search query, a transcript, a caption) nor what a model answered: /deleteme cannot reach a log. DEBUG may
show such text, and says so once when it is switched on (`install`)."""
from __future__ import annotations

import logging
import sys
from collections.abc import Iterable


class LineFormatter(logging.Formatter):
    """`time level logger: message` on one line; a traceback follows escaped on the same line."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        """Render one record as a single masked line."""
        line = (f"{self.formatTime(record, '%Y-%m-%dT%H:%M:%S')} {record.levelname.lower()} {record.name}: "
                f"{record.getMessage()}")
        if record.exc_info:
            line += " | " + self.formatException(record.exc_info).replace("\n", "\\n")
        for secret in self.secrets:
            line = line.replace(secret, "***")
        return line


class FirstLine(logging.Filter):
    """Cuts a library's message to its first line: matrix-nio logs an event it cannot read with its whole JSON schema
    and the event itself (what a person wrote) in one warning of some forty lines."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep the record, with only the first line of its message."""
        message = record.getMessage()
        if "\n" in message:
            record.msg, record.args = message.split("\n", 1)[0].rstrip() + " […]", ()
        return True


FIRST_LINE = FirstLine()


def install(level: str = "WARNING", secrets: Iterable[str] = ()) -> None:
    """Send every log record to stderr as one masked line at the given level."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LineFormatter(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    before = root.level
    root.setLevel(level.upper())
    for noisy in ("httpx", "httpx2", "httpcore", "aiosqlite", "apscheduler.executors.default"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    if root.level == logging.DEBUG and before != logging.DEBUG:  # once, though start-up installs twice
        logging.getLogger(__name__).warning(
            "DEBUG logging is on: the log now holds what people write (messages, notes, transcripts, searches) and"
            " what the models answer, which /deleteme cannot erase; set MNEMO_LOG_LEVEL to INFO or higher when done")
