"""The LLM providers, registered in one table, and the factory that builds the configured one."""
from __future__ import annotations

import importlib
from collections.abc import Callable

from bot.errors import ConfigError
from bot.llm.port import LLM

# Each provider's adapter as (module, class), imported only when it is used: the Anthropic SDK alone takes
# over a second to import, so a restart after a crash answers sooner. A new provider is one more entry.
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("bot.llm.openai_api", "OpenAIChat"),  # any OpenAI-compatible endpoint (Ollama, vLLM, …)
    "anthropic": ("bot.llm.anthropic_api", "AnthropicChat"),
}


def make_llm(provider: str, model: str, base_url: str | None, api_key: str | None, timeout: float) -> LLM:
    """Create the chat model of a registered provider ("openai", "anthropic")."""
    found = PROVIDERS.get(provider)
    if found is None:
        raise ConfigError(f"Unknown LLM provider {provider!r}; use one of: {', '.join(PROVIDERS)}.")
    module, name = found
    adapter: Callable[..., LLM] = getattr(importlib.import_module(module), name)
    return adapter(model, base_url, api_key, timeout=timeout)
