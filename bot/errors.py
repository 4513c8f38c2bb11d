"""Errors raised by the bot package.

    BotError
    ├── ConfigError          a setting is missing or wrong (one sentence for the operator)
    ├── MatrixError          the homeserver refused or could not do what the channel asked
    ├── HistoryError         an exported history (ChatGPT, Claude, Telegram) cannot be read as one
    ├── ToolServerError      an MCP server could not be started or reached, or did not answer a call in time
    ├── PictureError         a picture cannot go to the model: too large, too many pixels, another kind, damaged
    ├── DocumentError        a document is not read: too large, too many pages, no text, encrypted, another kind
    └── LLMError             the model could not give a usable answer
        ├── LLMUnavailable   connection refused, timeout, 5xx after retries
        ├── LLMRateLimited   429 after retries
        ├── LLMRejected      4xx other than 429: bad key, unknown model, bad request
        │   ├── LLMRefused   401/403/404: the key, the model's name or the URL is wrong (`fix` says which)
        │   └── LLMTooLong   400/413 for a prompt longer than the model's context
        └── LLMBadOutput     the reply is not the JSON (or shape) that was asked for
"""
from __future__ import annotations

from typing import Literal


class BotError(Exception):
    """Base of every error the bot package raises."""


class ConfigError(BotError):
    """A setting is missing or wrong; the message is one sentence an operator can act on."""


class MatrixError(BotError):
    """The homeserver refused or could not do what the channel asked (send, create a room, sync)."""


class HistoryError(BotError):
    """An exported history cannot be read: another format, a damaged zip or JSON, an empty file, no such person.

    `reason` names one short sentence of bot/texts/history_errors.py (it says where in the file, when that helps),
    `said(lang)` gives it in the person's language; the error's own message is the English one. A value may be a
    function of the language (a list of participants with their counted messages).
    """

    def __init__(self, reason: str, **values: object) -> None:
        self.reason, self.values = reason, values
        super().__init__(self.said("en"))

    def said(self, lang: str) -> str:
        """The sentence in `lang` (German when the language is unknown); numbers with the language's separators."""
        from bot.texts.history_errors import HISTORY_ERRORS

        entry = HISTORY_ERRORS[self.reason]
        shown = {key: _shown(value, lang) for key, value in self.values.items()}
        return entry.get(lang, entry["de"]).format(**shown)


def _shown(value: object, lang: str) -> object:
    """A value of a HistoryError as written in `lang`."""
    if callable(value):
        return value(lang)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}".replace(",", "." if lang != "en" else ",")
    return value


class ToolServerError(BotError):
    """An MCP server could not be started or reached, closed its connection, or did not answer in time.

    `why` says which, for the person's words: "unreachable", "timeout", or "error" (the server answered with one).
    """

    def __init__(self, message: str, why: Literal["unreachable", "timeout", "error"] = "unreachable") -> None:
        super().__init__(message)
        self.why = why


class PictureError(BotError):
    """A picture cannot go to the model; `reason` names the short sentence the person gets (bot/texts/), `values`
    fill it in."""

    def __init__(self, reason: str, detail: str = "", **values: str) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.values = values


class DocumentError(BotError):
    """A document is not read; `reason` names the short sentence the person gets (bot/texts/documents.py), `values` fill
    it in."""

    def __init__(self, reason: str, detail: str = "", **values: str) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.values = values


class LLMError(BotError):
    """The model could not give a usable answer."""


class LLMUnavailable(LLMError):
    """The model endpoint did not answer (connection, timeout, server error)."""


class LLMRateLimited(LLMError):
    """The model endpoint kept answering 429."""


class LLMRejected(LLMError):
    """The model endpoint refused the request (authentication, unknown model, bad request)."""


class LLMRefused(LLMRejected):
    """The endpoint refused who is asking or what for: `fix` is "key" (401/403: the API key is wrong or lacks the
    right) or "model" (404: the model's name or the base URL is wrong). Only the operator can mend it."""

    def __init__(self, message: str, fix: Literal["key", "model"]) -> None:
        super().__init__(message)
        self.fix = fix


class LLMTooLong(LLMRejected):
    """The prompt is longer than the model's context (a 400 naming the context length, or a 413)."""


class LLMBadOutput(LLMError):
    """The model's reply is not in the shape that was asked for."""
