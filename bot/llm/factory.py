"""Build the configured LLM adapter."""
from __future__ import annotations

from bot.errors import ConfigError
from bot.llm.port import LLM

PROVIDERS = ("openai", "anthropic")


def make_llm(provider: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> LLM:
    """Create the chat model for a provider name: "openai" (any compatible endpoint) or "anthropic".

    Each SDK is imported only when it is used (the Anthropic one alone takes over a second), so a restart
    after a crash answers sooner.
    """
    if provider == "openai":
        from bot.llm.openai_api import OpenAIChat

        return OpenAIChat(model, base_url, api_key, timeout=timeout)
    if provider == "anthropic":
        from bot.llm.anthropic_api import AnthropicChat

        return AnthropicChat(model, base_url, api_key, timeout=timeout)
    raise ConfigError(f"Unknown LLM provider {provider!r}; use one of: {', '.join(PROVIDERS)}.")
