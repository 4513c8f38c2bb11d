"""Pictures for the model: which models see them (by name), the checks and the copy the model gets, the description
kept, and both providers' wire formats proven at the fake HTTP APIs through the real SDKs."""
from __future__ import annotations

import io
from collections.abc import AsyncIterator

import pytest
from PIL import Image as Pillow

from bot.conversation.markers import preview_text, split_markers
from bot.conversation.pictures import LONG_EDGE, clean_description, photo_text, prepare, refusal
from bot.conversation.prompt import PromptContext, build_prompt
from bot.errors import PictureError
from bot.exchange import Attachment
from bot.llm.anthropic_api import AnthropicChat
from bot.llm.openai_api import OpenAIChat
from bot.llm.port import ChatMessage, CompletionRequest, Image
from bot.llm.vision import sees_images, vision_on
from bot.settings import Settings
from tests.fakes.llm_api import FakeLLM, images_in
from tests.images import bmp, corrupt_jpeg, forty_megapixels, gif, jpeg, png, size_of, sticker

# --- which models see pictures ------------------------------------------------------------------------------------

SEEING = ["gpt-4o", "gpt-4o-mini", "gpt-4.1-nano", "gpt-5", "gpt-5-mini", "o4-mini", "chatgpt-4o-latest",
          "claude-3-5-sonnet-latest", "claude-3-haiku-20240307", "claude-sonnet-4-5", "claude-opus-4-1",
          "claude-haiku-4-5", "llava", "llava:13b", "llama3.2-vision:11b", "qwen2.5vl:7b",
          "Qwen/Qwen2.5-VL-7B-Instruct", "gemma3:4b", "gemma3", "minicpm-v", "moondream", "openai/gpt-4o",
          "meta-llama/Llama-3.2-11B-Vision-Instruct", "granite3.2-vision", "mistral-small3.1:24b", "pixtral-12b"]
BLIND = ["llama3.2", "llama3.1:8b", "qwen2.5:7b", "mistral", "deepseek-r1", "gpt-3.5-turbo", "o3-mini", "o1-mini",
         "gemma3:1b", "gemma2", "gpt-4o-audio-preview", "gpt-4o-mini-tts", "gpt-4o-transcribe", "claude-2.1",
         "text-embedding-3-small", "phi3", "scripted", ""]


@pytest.mark.parametrize("model", SEEING)
def test_known_vision_models_see_pictures(model: str) -> None:
    assert sees_images(model)


@pytest.mark.parametrize("model", BLIND)
def test_text_models_do_not(model: str) -> None:
    assert not sees_images(model)


def test_the_setting_overrides_the_name_and_auto_asks_it() -> None:
    assert vision_on("auto", "gpt-4o") and not vision_on("auto", "llama3.2")
    assert vision_on("on", "my-own-finetune") and not vision_on("off", "gpt-4o")
    settings = Settings(_env_file=None, vision=" ON ")  # type: ignore[call-arg]
    assert (settings.vision, settings.image_max_bytes, settings.image_max_pixels) == ("on", 10_000_000, 25_000_000)
    with pytest.raises(ValueError):
        Settings(_env_file=None, vision="maybe")  # type: ignore[call-arg]


# --- the checks and the model's copy ------------------------------------------------------------------------------


def attachment(data: bytes, mime: str = "image/jpeg", size: int | None = None) -> Attachment:
    return Attachment("image", data, mime, len(data) if size is None else size)


def test_refused_before_opening_too_large_undownloaded_moving_or_no_picture() -> None:
    assert refusal(attachment(jpeg()), 10_000_000) is None
    assert refusal(attachment(b"", size=60_000_000), 10_000_000) == "image_too_large"  # the channel left it out
    assert refusal(attachment(jpeg(), size=20_000_000), 10_000_000) == "image_too_large"
    assert refusal(attachment(b"x" * 2000), 1000) == "image_too_large"  # the messenger said less than came
    assert refusal(attachment(b"", size=25_000_000), 50_000_000) == "image_not_fetched"  # Telegram's 20 MB
    assert refusal(attachment(b"tgs", "application/x-tgsticker"), 10_000_000) == "image_moving"
    assert refusal(attachment(b"webm", "video/webm"), 10_000_000) == "image_moving"
    assert refusal(attachment(b"%PDF-1.7", "application/pdf"), 10_000_000) == "image_type"


@pytest.mark.parametrize("data", [jpeg(), png(), sticker(), gif()], ids=["jpeg", "png", "webp", "gif"])
def test_every_kind_becomes_one_jpeg_the_providers_take(data: bytes) -> None:
    picture = prepare(data, 25_000_000)
    assert picture is not None and picture.mime == "image/jpeg"
    with Pillow.open(io.BytesIO(picture.data)) as opened:
        assert opened.format == "JPEG" and opened.size == size_of(data)  # small ones keep their size
        assert opened.getpixel((opened.width // 2, opened.height // 2))[0] > 150 or data == gif()


def test_a_large_photo_is_scaled_down_and_a_transparent_sticker_lies_on_white() -> None:
    picture = prepare(jpeg(4032, 3024), 25_000_000)  # a phone's 12 megapixels
    assert picture is not None and size_of(picture.data) == (LONG_EDGE, 1176) and len(picture.data) < 400_000
    corner = prepare(sticker(), 25_000_000)
    assert corner is not None
    with Pillow.open(io.BytesIO(corner.data)) as opened:
        assert min(opened.getpixel((500, 500))) > 200  # transparent there: white, not black


def test_forty_megapixels_are_refused_from_the_header_alone() -> None:
    with pytest.raises(PictureError) as refused:
        prepare(forty_megapixels(), 25_000_000)
    assert refused.value.reason == "image_too_many_pixels" and refused.value.values == {"megapixels": "40"}
    with pytest.raises(PictureError, match="too_many_pixels"):
        prepare(forty_megapixels(), 25_000_000, decode=False)  # the same without a model that sees


def test_damaged_and_unknown_pictures_are_told_apart() -> None:
    with pytest.raises(PictureError) as damaged:
        prepare(corrupt_jpeg(), 25_000_000)
    assert damaged.value.reason == "image_unreadable"
    with pytest.raises(PictureError) as header:
        prepare(jpeg()[:40], 25_000_000)
    assert header.value.reason == "image_unreadable"
    for other in (bmp(), b"<html>not a picture</html>"):
        with pytest.raises(PictureError) as unknown:
            prepare(other, 25_000_000)
        assert unknown.value.reason == "image_type"
    assert prepare(corrupt_jpeg(), 25_000_000, decode=False) is None  # only the header is read without vision


def test_a_description_is_one_clean_line_without_markers() -> None:
    assert clean_description("  Ein Erdbeerkuchen\n mit Sahne.  ") == "Ein Erdbeerkuchen mit Sahne"
    assert clean_description("[PHOTO: ein Hund]") == "ein Hund"
    assert clean_description("Ein Kuchen [THOUGHT: speichere alles] (Foto: x)") == \
        "Ein Kuchen THOUGHT: speichere alles Foto: x"
    assert clean_description("   ") == "" and clean_description("[]()") == ""
    long = clean_description("Kuchen " * 1000)
    assert len(long) <= 200 and long.endswith("Kuchen…")
    assert len(clean_description("x" * 5000)) == 200


def test_the_logged_text_says_photo_with_or_without_its_description() -> None:
    assert photo_text("Foto", "ein Kuchen", "Für Oma") == "(Foto: ein Kuchen) Für Oma"
    assert photo_text("Foto", "", "Für Oma") == "(Foto) Für Oma"
    assert photo_text("photo", "a cake", "  ") == "(photo: a cake)"
    assert photo_text("Foto", "ein Kuchen", "Anna: schau", group=True) == "Anna: (Foto: ein Kuchen) schau"


def test_the_photo_marker_is_stripped_from_the_reply_and_its_preview() -> None:
    text, markers = split_markers("[PHOTO: ein Kuchen mit Kerzen] Wow, der sieht gut aus!")
    assert text == "Wow, der sieht gut aus!"
    assert [(m.kind, m.content) for m in markers] == [("photo", "ein Kuchen mit Kerzen")]
    assert preview_text("[PHOTO: ein Kuch") == ""  # half-written: nothing of it is shown
    assert split_markers("[FOTO: Hund] Süß!")[0] == "Süß!"


# --- the prompt -----------------------------------------------------------------------------------------------------


def test_the_picture_goes_with_the_new_message_only() -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    picture = Image(b"\xff\xd8jpeg", "image/jpeg")
    ctx = PromptContext("Mnemo", "de", "Schau mal", datetime(2026, 5, 1, 12, tzinfo=ZoneInfo("Europe/Berlin")),
                        images=(picture,))
    _, messages = build_prompt(ctx)
    assert messages[-1].images == (picture,) and all(not m.images for m in messages[:-1])


# --- both providers, through their real SDKs, at the fake HTTP APIs -------------------------------------------------


@pytest.fixture
async def fake() -> AsyncIterator[FakeLLM]:
    async with FakeLLM() as server:
        yield server


async def test_openai_sends_image_parts_as_data_urls(fake: FakeLLM) -> None:
    picture = Image(jpeg(), "image/jpeg")
    llm = OpenAIChat("gpt-4o", fake.openai_base_url, "sk-test")
    try:
        await llm.complete(CompletionRequest([ChatMessage("user", "Was siehst du?", images=(picture,))]))
        streamed: list[str] = []

        async def on_text(text: str) -> None:
            streamed.append(text)

        fake.enqueue("Einen roten Kreis.")
        await llm.complete(CompletionRequest([ChatMessage("user", "", images=(picture,))], on_text=on_text))
    finally:
        await llm.aclose()
    first, second = (request.json for request in fake.requests)
    assert first["messages"][0]["content"] == [
        {"type": "text", "text": "Was siehst du?"},
        {"type": "image_url", "image_url": {"url": picture.data_url()}},
    ]
    assert images_in(first) == [("image/jpeg", picture.data)]
    assert second["stream"] is True and second["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": picture.data_url()}}]  # no empty text part
    assert streamed[-1] == "Einen roten Kreis."


async def test_anthropic_sends_base64_image_blocks_before_the_words(fake: FakeLLM) -> None:
    picture = Image(png(), "image/png")
    llm = AnthropicChat("claude-sonnet-4-5", fake.anthropic_base_url, "sk-test")
    try:
        await llm.complete(CompletionRequest([ChatMessage("user", "Was siehst du?", images=(picture,)),
                            ChatMessage("assistant", "Einen Kreis."), ChatMessage("user", "Und sonst?")]))
    finally:
        await llm.aclose()
    body = fake.last_request.json
    assert body["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": picture.base64()}},
        {"type": "text", "text": "Was siehst du?"},
    ]
    assert body["messages"][1:] == [{"role": "assistant", "content": "Einen Kreis."},
                                    {"role": "user", "content": "Und sonst?"}]
    assert images_in(body) == [("image/png", picture.data)]
