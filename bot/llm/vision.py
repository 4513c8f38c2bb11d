"""Whether the chat model sees pictures: MNEMO_VISION (auto, on, off), and for auto the known vision models by name."""
from __future__ import annotations

import re
from typing import Literal

VisionSetting = Literal["auto", "on", "off"]

# Model names (as OpenAI, Anthropic, Ollama, OpenRouter and vLLM write them) of models that take images. A name is
# matched without its provider prefix ('openai/gpt-4o', 'meta-llama/…') and without case.
_SEES = re.compile(
    r"^(?:"
    r"gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo|gpt-4-vision|gpt-5|o1(?!-mini|-preview)|o3(?!-mini)|o4-mini"
    r"|claude-3|claude-(?:opus|sonnet|haiku)-[4-9]"
    r"|llava|bakllava|llama3\.2-vision|llama-3\.2-\d+b-vision|llama-?4|minicpm-v|moondream"
    r"|qwen2\.5-?vl|qwen2-?vl|qwen3-?vl|qwen-?vl|qvq|gemma-?3\b|granite3\.2-vision|pixtral"
    r"|mistral-small3\.[12]|mistral-small-3\.[12]|mistral-medium|gemini|internvl|glm-4\.?\dv"
    r")",
    re.IGNORECASE,
)
# Names that begin like a vision model but are not one: audio, speech and embedding models, the text-only
# gemma3 sizes (1b, 270m).
_BLIND = re.compile(r"audio|realtime|transcribe|tts|embed|search-preview|^gemma-?3:(?:1b|270m)\b", re.IGNORECASE)


def sees_images(model: str) -> bool:
    """Whether a chat model is known by its name to take pictures ('gpt-4o-mini', 'llava:13b', 'claude-sonnet-4-5')."""
    name = model.strip().rsplit("/", 1)[-1]
    return bool(_SEES.match(name)) and not _BLIND.search(name)


def vision_on(setting: VisionSetting, model: str) -> bool:
    """Whether pictures go to the chat model: 'on' and 'off' say so, 'auto' asks `sees_images`."""
    if setting == "auto":
        return sees_images(model)
    return setting == "on"
