"""Errors raised by the scheduler package.

    SchedulerError
    └── BadModelOutput   the background model's answer is not in the shape asked for
"""
from __future__ import annotations


class SchedulerError(Exception):
    """Base of every error the scheduler package raises."""


class BadModelOutput(SchedulerError):
    """A reflection or diary answer that cannot be used; nothing is stored."""
