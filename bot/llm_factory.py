"""Build the configured LLM adapter."""
from __future__ import annotations

from bot.errors import ConfigError
from bot.llm import LLM

PROVIDERS = ("openai", "anthropic")


def make_llm(provider: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> LLM:
    """Create the chat model for a provider name: "openai" (any compatible endpoint) or "anthropic".

    Each SDK is imported only when it is used (the Anthropic one alone takes over a second), so a restart
    after a crash answers sooner.
    """
    if provider == "openai":
        from bot.llm_openai import OpenAIChat

        return OpenAIChat(model, base_url, api_key, timeout=timeout)
    if provider == "anthropic":
        from bot.llm_anthropic import AnthropicChat

        return AnthropicChat(model, base_url, api_key, timeout=timeout)
    raise ConfigError(f"Unknown LLM provider {provider!r}; use one of: {', '.join(PROVIDERS)}.")
