"""Build the configured LLM adapter."""
from __future__ import annotations

from bot.errors import ConfigError
from bot.llm import LLM
from bot.llm_anthropic import AnthropicChat
from bot.llm_openai import OpenAIChat

PROVIDERS = ("openai", "anthropic")


def make_llm(provider: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> LLM:
    """Create the chat model for a provider name: "openai" (any compatible endpoint) or "anthropic"."""
    if provider == "openai":
        return OpenAIChat(model, base_url, api_key, timeout=timeout)
    if provider == "anthropic":
        return AnthropicChat(model, base_url, api_key, timeout=timeout)
    raise ConfigError(f"Unknown LLM provider {provider!r}; use one of: {', '.join(PROVIDERS)}.")
