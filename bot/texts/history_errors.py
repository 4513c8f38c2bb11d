"""Why an export cannot be read (`bot.errors.HistoryError`), in German and English; the English one is also the
error's own message, for logs and tracebacks."""
from __future__ import annotations

_WHERE_DE = "bei etwa Byte {pos} von {total} ({share} %)"
_WHERE_EN = "at about byte {pos} of {total}, {share}%"
_EXPORTS_DE = "ein Export von ChatGPT, Claude oder Telegram"

HISTORY_ERRORS: dict[str, dict[str, str]] = {
    "history_no_such_path": {"de": "{name}: Diese Datei oder diesen Ordner gibt es nicht",
                             "en": "{name}: no such file or folder"},
    "history_unopenable": {"de": "{name}: lässt sich nicht öffnen ({error})",
                           "en": "{name}: cannot be opened ({error})"},
    "history_unreadable": {"de": "{name}: lässt sich nicht lesen ({error})", "en": "{name}: cannot be read ({error})"},
    "history_empty": {"de": "{name}: Die Datei ist leer", "en": "{name}: the file is empty"},
    "history_folder_without_export": {
        "de": "{name}: Im Ordner liegt weder conversations.json noch result.json",
        "en": "{name}: the folder holds neither conversations.json nor result.json",
    },
    "history_zip_damaged": {
        "de": "{name}: Das Zip ist beschädigt oder unvollständig (wurde das Herunterladen abgebrochen?)",
        "en": "{name}: the zip is damaged or incomplete (was the download cut off?)",
    },
    "history_zip_damaged_at": {
        "de": "{name}: Das Zip ist bei etwa Byte {pos} beschädigt ({error}); lade den Export bitte neu herunter",
        "en": "{name}: the zip is damaged at about byte {pos} ({error}); download the export again",
    },
    "history_zip_without_export": {
        "de": "{name}: Im Zip liegt weder conversations.json noch result.json; ist es " + _EXPORTS_DE + "?",
        "en": "{name}: the zip holds neither conversations.json nor result.json; is it a ChatGPT, Claude or "
              "Telegram export?",
    },
    "history_zip_member_unreadable": {"de": "{name}: {member} im Zip lässt sich nicht lesen ({error})",
                                      "en": "{name}: {member} in the zip cannot be read ({error})"},
    "history_item_too_large": {
        "de": "{name}: Ein Gespräch oder eine Nachricht ist größer als {mb} MB (bei etwa Byte {pos}); so sieht kein "
              "gewöhnlicher Export aus",
        "en": "{name}: one conversation or message is larger than {mb} MB (at about byte {pos}); not a normal export",
    },
    "history_cut_off": {"de": "{name}: Die Datei endet mittendrin (" + _WHERE_DE + "); wurde sie abgeschnitten?",
                        "en": "{name}: the file ends in the middle (" + _WHERE_EN + "); was it cut off?"},
    "history_not_utf8": {"de": "{name}: Der Text ist " + _WHERE_DE + " kein UTF-8; die Datei ist beschädigt",
                         "en": "{name}: the text is not UTF-8 " + _WHERE_EN + "; the file is damaged"},
    "history_json_damaged": {"de": "{name}: Das JSON ist " + _WHERE_DE + " beschädigt",
                             "en": "{name}: the JSON is damaged " + _WHERE_EN},
    "history_no_conversations": {"de": "{name}: enthält keine Gespräche", "en": "{name}: holds no conversations"},
    "history_not_an_export": {"de": "{name}: ist kein Export von ChatGPT, Claude oder Telegram",
                              "en": "{name}: is not a ChatGPT, Claude or Telegram export"},
    "history_json_not_an_export": {"de": "{name}: ist JSON, aber kein Export von ChatGPT, Claude oder Telegram",
                                   "en": "{name}: is JSON, but not a ChatGPT, Claude or Telegram export"},
    "history_unknown_format": {"de": "Das Format „{fmt}“ kenne ich nicht; möglich sind chatgpt, claude und telegram",
                               "en": "unknown format '{fmt}'; use chatgpt, claude or telegram"},
    "history_other_format": {"de": "{name}: Das ist ein Export von {found}, nicht von {asked}",
                             "en": "{name}: this is a {found} export, not {asked}"},
    "history_no_such_chat": {"de": "{name}: Es gibt keinen Chat namens „{chat}“; die Chats heißen: {chats}",
                             "en": "{name}: no chat called '{chat}'; the chats are: {chats}"},
    "history_no_such_person": {"de": "{name}: Hier schreibt niemand namens „{person}“; die Beteiligten: {participants}",
                               "en": "{name}: nobody called '{person}' writes here; the participants are: "
                                     "{participants}"},
    "history_which_person": {
        "de": "{name}: Sag mit --person NAME oder ID, wer von den Beteiligten du bist: {participants}",
        "en": "{name}: say which participant you are (--person NAME or ID): {participants}",
    },
}
