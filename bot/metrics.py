"""The `Metrics` port: what the engine, the channels, the models and the scheduler count, and a no-op default.

Labels stay small and bounded: a channel's name, a purpose ('chat', 'background'), a job's kind, an error's kind;
never a user id or a text. The Prometheus implementation lives in `bot/web_page/prometheus.py`.
"""
from __future__ import annotations

from typing import Protocol


class Metrics(Protocol):
    """Counters for what happens in the process (also the scheduler's `JobRuns`)."""

    def message_in(self, channel: str) -> None:
        """A person's message (or command) reached mnemo on this channel."""

    def message_out(self, channel: str) -> None:
        """mnemo answered one on this channel."""

    def reply_seconds(self, channel: str, seconds: float) -> None:
        """How long an answer took, from the message to the reply."""

    def model_call(self, purpose: str, *, input_tokens: int = 0, output_tokens: int = 0,
                   cache_read_tokens: int = 0, failed: bool = False) -> None:
        """One model call of this purpose ('chat', 'background') and the tokens it reported."""

    def error(self, kind: str) -> None:
        """One error of this kind ('model.chat', 'turn', …)."""

    def job_ran(self, job: str, outcome: str) -> None:
        """A scheduler job of this kind ran: 'ok', 'failed' or 'skipped'."""


class NoMetrics:
    """Counts nothing: the default where no web server is set up."""

    def message_in(self, channel: str) -> None:
        """Count nothing."""

    def message_out(self, channel: str) -> None:
        """Count nothing."""

    def reply_seconds(self, channel: str, seconds: float) -> None:
        """Count nothing."""

    def model_call(self, purpose: str, *, input_tokens: int = 0, output_tokens: int = 0,
                   cache_read_tokens: int = 0, failed: bool = False) -> None:
        """Count nothing."""

    def error(self, kind: str) -> None:
        """Count nothing."""

    def job_ran(self, job: str, outcome: str) -> None:
        """Count nothing."""


NO_METRICS: Metrics = NoMetrics()
