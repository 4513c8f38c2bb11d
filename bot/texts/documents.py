"""What mnemo says about a document on its own (de/en): the label of its message, why one is not read, that only its
beginning was read (bot/conversation/documents.py, document_steps.py)."""
from __future__ import annotations

DOCUMENT_TEXTS: dict[str, dict[str, str]] = {
    "document_label": {"de": "Dokument", "en": "document"},
    "document_too_big": {
        "de": "Das Dokument ist mir zu groß ({size} MB, ich lese höchstens {limit} MB) – ich habe es nicht gelesen. "
              "Schick mir bitte einen Auszug oder eine kleinere Datei.",
        "en": "That document is too big for me ({size} MB, I read at most {limit} MB) – I haven't read it. Please "
              "send an excerpt or a smaller file.",
    },
    "document_too_many_pages": {
        "de": "Das PDF hat {pages} Seiten, ich lese höchstens {limit} – ich habe es nicht gelesen. Schick mir bitte "
              "nur die Seiten, um die es geht.",
        "en": "That PDF has {pages} pages and I read at most {limit} – I haven't read it. Please send only the pages "
              "that matter.",
    },
    "document_no_text": {
        "de": "In diesem PDF steht kein Text, den ich lesen kann – es ist wohl eingescannt und besteht nur aus "
              "Bildern. Schick mir den Text bitte als Nachricht oder als Textdatei.",
        "en": "There is no text in this PDF that I can read – it seems to be scanned, only pictures. Please send me "
              "the text as a message or a text file.",
    },
    "document_empty": {"de": "Die Datei ist leer – da gibt es nichts zu lesen.",
                       "en": "That file is empty – there is nothing to read."},
    "document_encrypted": {
        "de": "Das PDF ist mit einem Passwort geschützt – das kann ich nicht öffnen. Schick es mir bitte ohne Schutz.",
        "en": "That PDF is protected by a password – I can't open it. Please send it without the protection.",
    },
    "document_damaged": {
        "de": "Diese Datei kann ich nicht öffnen – sie scheint beschädigt zu sein.",
        "en": "I can't open that file – it seems to be damaged.",
    },
    "document_unknown_kind": {
        "de": "Diese Art Datei kann ich nicht lesen – ich lese PDF-, Text-, Markdown- und CSV-Dateien.",
        "en": "I can't read that kind of file – I read PDF, text, Markdown and CSV files.",
    },
    "document_too_slow": {
        "de": "Das Dokument ließ sich nicht in {seconds} Sekunden lesen – ich habe aufgehört. Schick mir bitte einen "
              "Auszug, als Text oder als kleineres PDF.",
        "en": "I couldn't read that document within {seconds} seconds, so I stopped. Please send an excerpt, as text "
              "or as a smaller PDF.",
    },
    "document_cut": {
        "de": "(Das Dokument war lang – ich habe nur die ersten {chars} von {total} Zeichen gelesen.)",
        "en": "(The document was long – I read only its first {chars} of {total} characters.)",
    },
}
