"""What mnemo says about a photo on its own (de/en): the label of a photo's message, a picture not seen, a picture
refused (bot/conversation/pictures.py, photo_steps.py)."""
from __future__ import annotations

PICTURE_TEXTS: dict[str, dict[str, str]] = {
    "photo_label": {"de": "Foto", "en": "photo"},
    "photo_not_seen": {
        "de": "(Das Foto selbst konnte ich nicht sehen – nur deine Worte dazu.)",
        "en": "(I couldn't see the photo itself – only your words with it.)",
    },
    "photo_unseen": {
        "de": "Fotos kann ich mir leider nicht ansehen – mein Sprachmodell versteht keine Bilder (wer mich betreibt, "
              "kann eins einstellen, das es kann). Erzähl mir doch, was darauf ist!",
        "en": "I can't look at photos, sorry – my language model doesn't understand pictures (whoever runs me can set "
              "up one that does). Tell me what's on it!",
    },
    "image_too_large": {
        "de": "Das Bild ist mir zu groß ({size}, ich nehme höchstens {limit}). Schick es mir bitte kleiner.",
        "en": "That picture is too large for me ({size}, I take at most {limit}). Please send a smaller one.",
    },
    "image_not_fetched": {
        "de": "Dieses Bild ({size}) konnte ich nicht herunterladen. Schick es mir bitte kleiner.",
        "en": "I couldn't download this picture ({size}). Please send a smaller one.",
    },
    "image_too_many_pixels": {
        "de": "Das Bild hat zu viele Pixel ({megapixels} Megapixel, ich nehme höchstens {max_megapixels}). "
              "Schick es mir bitte kleiner.",
        "en": "That picture has too many pixels ({megapixels} megapixels, I take at most {max_megapixels}). "
              "Please send a smaller one.",
    },
    "image_type": {
        "de": "Diese Art Bild kann ich nicht öffnen – schick es mir bitte als JPEG, PNG, WebP oder GIF.",
        "en": "I can't open this kind of picture – please send it as a JPEG, PNG, WebP or GIF.",
    },
    "image_moving": {
        "de": "Bewegte Bilder wie animierte Sticker oder Videos kann ich mir nicht ansehen.",
        "en": "I can't watch moving pictures like animated stickers or videos.",
    },
    "image_undecryptable": {
        "de": "Dieses Bild konnte ich nicht öffnen – es ließ sich nicht entschlüsseln. "
              "Schick es mir bitte noch einmal.",
        "en": "I couldn't open this picture – it could not be decrypted. Please send it again.",
    },
    "image_unreadable": {
        "de": "Das Bild ist beschädigt, ich kann es nicht öffnen. Schick es mir bitte noch einmal.",
        "en": "That picture is damaged, I can't open it. Please send it again.",
    },
}
