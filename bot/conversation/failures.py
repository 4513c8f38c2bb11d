"""What a person is told when the chat model fails, and the words that tell the operator how to mend it (pure)."""
from __future__ import annotations

from bot.errors import LLMError, LLMRefused, LLMTooLong


def failure_text(exc: LLMError) -> str:
    """The text key for the person: a prompt over the model's context, a service refusing mnemo, else unreachable."""
    if isinstance(exc, LLMTooLong):
        return "model_too_long"
    if isinstance(exc, LLMRefused):
        return "model_refused"
    return "model_down"


def operator_fix(exc: LLMError, settings: str = "MNEMO_CHAT") -> str:
    """What the operator changes, for the log line ('' when nothing is to be changed, such as an outage).

    `settings` is how the model's settings begin (MNEMO_CHAT, MNEMO_BACKGROUND)."""
    if isinstance(exc, LLMRefused):
        if exc.fix == "key":
            return f"the API key is wrong or lacks the right: check {settings}_API_KEY"
        return f"the model's name or the URL is wrong: check {settings}_MODEL and {settings}_BASE_URL"
    if isinstance(exc, LLMTooLong):
        return (f"the prompt is over the model's context: choose a model with a longer context in {settings}_MODEL "
                "(or give it more on its server, e.g. Ollama's num_ctx), or lower MNEMO_RECENT_MESSAGES and "
                "MNEMO_DOCUMENT_MAX_CHARS")
    return ""


def log_words(exc: LLMError, settings: str = "MNEMO_CHAT") -> str:
    """The error with the fix after it, as the log line says it."""
    fix = operator_fix(exc, settings)
    return f"{exc} – {fix}" if fix else str(exc)
