"""Everything mnemo says on its own, in German (default) and English."""
from __future__ import annotations

from typing import Literal

from bot.texts.commands import COMMAND_TEXTS
from bot.texts.counts import COUNT_TEXTS
from bot.texts.documents import DOCUMENT_TEXTS
from bot.texts.help_lines import HELP_TEXTS
from bot.texts.history_errors import HISTORY_ERRORS
from bot.texts.history_preview import HISTORY_TEXTS
from bot.texts.history_run import IMPORT_TEXTS
from bot.texts.pictures import PICTURE_TEXTS
from bot.texts.proactive import PROACTIVE_TEXTS
from bot.texts.review import REVIEW_TEXTS
from bot.texts.voice import VOICE_TEXTS
from bot.texts.web_page import PAGE_TEXTS
from bot.texts.web_tools import WEB_TEXTS

Lang = Literal["de", "en"]

TEXTS: dict[str, dict[str, str]] = {
    "model_down": {
        "de": "Ich kann gerade nicht antworten – mein Sprachmodell ist nicht erreichbar. "
              "Deine Nachricht habe ich gespeichert.",
        "en": "I can't answer right now – my language model is unreachable. I have saved your message.",
    },
    "model_refused": {
        "de": "Ich kann gerade nicht antworten – mein Sprachmodell lehnt meine Anfragen ab. Das muss mein Betreiber "
              "in den Einstellungen beheben. Deine Nachricht habe ich gespeichert.",
        "en": "I can't answer right now – my language model refuses my requests. My operator has to fix that in the "
              "settings. I have saved your message.",
    },
    "model_too_long": {
        "de": "Das ist mir gerade zu viel Text auf einmal – mein Sprachmodell kann nicht so viel lesen. Ein kürzerer "
              "Text geht; mein Betreiber sieht, was er ändern kann. Deine Nachricht habe ich gespeichert.",
        "en": "That is more text than I can take at once – my language model can't read that much. A shorter text "
              "works; my operator sees what to change. I have saved your message.",
    },
    "too_long": {
        "de": "Die Nachricht ist zu lang ({size} Zeichen, höchstens {limit}). Schick sie mir bitte in kürzeren Teilen.",
        "en": "That message is too long ({size} characters, at most {limit}). Please send it in shorter parts.",
    },
    "rate_limited": {
        "de": "Langsam bitte – so viele Nachrichten auf einmal kann ich nicht lesen. Diese habe ich weder gelesen "
              "noch gespeichert; schick sie mir gleich noch einmal.",
        "en": "Slow down, please – that's more messages than I can read at once. I have neither read nor saved "
              "this one; send it again in a moment.",
    },
    "not_text": {
        "de": "Das kann ich nicht lesen – bitte schreib mir Text.",
        "en": "I can't read that – please send me text.",
    },
    "rule_question": {"de": "Soll ich mir das merken? 📌 {rule}", "en": "Shall I remember this? 📌 {rule}"},
    "rule_saved": {"de": "📌 Gemerkt: {rule}", "en": "📌 Noted: {rule}"},
    "rule_dropped": {"de": "In Ordnung, das merke ich mir nicht.", "en": "Okay, I won't keep that."},
    "profile_question": {"de": "Darf ich mir das über dich merken? 👤 {fact}",
                         "en": "May I remember this about you? 👤 {fact}"},
    "profile_question_group": {"de": "Darf ich mir das über euch merken? 👤 {fact}",
                               "en": "May I remember this about this group? 👤 {fact}"},
    "profile_saved": {"de": "👤 Gemerkt: {fact}", "en": "👤 Noted: {fact}"},
    "tool_question": {"de": "Darf ich das ausführen? 🔧 {tool}{args}", "en": "May I run this? 🔧 {tool}{args}"},
    "tool_done": {"de": "🔧 Ausgeführt: {tool}\n{result}", "en": "🔧 Done: {tool}\n{result}"},
    "tool_press_to_run": {"de": "{tool} führe ich nur aus, wenn du unter der Frage „Ja“ wählst.",
                          "en": "I run {tool} only when you choose “Yes” under the question."},
    "tool_not_run": {"de": "In Ordnung, {tool} führe ich nicht aus.", "en": "Okay, I won't run {tool}."},
    "tool_failed": {"de": "🔧 {tool} hat nicht geklappt: {error}", "en": "🔧 {tool} did not work: {error}"},
    # Why a held call failed, in the person's words (`ToolFailed.why`); the raw error goes to the log.
    "tool_failed_timeout": {"de": "Der Server hat nicht rechtzeitig geantwortet.",
                            "en": "The server did not answer in time."},
    "tool_failed_unreachable": {"de": "Der Server ist nicht erreichbar.", "en": "The server is not reachable."},
    "tool_failed_error": {"de": "Der Server hat einen Fehler gemeldet.", "en": "The server reported an error."},
    "tool_failed_failed": {"de": "Dabei ist ein Fehler aufgetreten.", "en": "Something went wrong."},
    "tool_gone": {"de": "🔧 {tool} steht mir nicht mehr zur Verfügung – ich habe nichts ausgeführt.",
                  "en": "🔧 {tool} is no longer available to me – I ran nothing."},
    "yes": {"de": "Ja", "en": "Yes"},
    "crisis_model_down": {"de": "Ich bin da und lese, was du schreibst. Bitte wende dich jetzt an die Menschen unter "
                                "den Nummern oben: Sie können dir sofort helfen.",
                          "en": "I'm here and I read what you write. Please reach out now to the people at the "
                                "numbers above: they can help you right away."},
    "group_admins_only": {"de": "Das dürfen in dieser Gruppe nur die Admins entscheiden.",
                          "en": "Only this group's admins may decide that."},
    "no": {"de": "Nein", "en": "No"},
    "empty": {"de": "Die Nachricht war leer.", "en": "That message was empty."},
    # --- pairing (unknown users) and admin commands --------------------------------------------------------
    "pairing_code": {
        "de": "Hallo! Wir kennen uns noch nicht. Dein Kopplungscode ist {code} (gültig {minutes}). "
              "Gib ihn der Person, die mich betreibt – sobald sie ihn freigibt, können wir reden. "
              "Bis dahin speichere ich nichts von dir.",
        "en": "Hi! We haven't met yet. Your pairing code is {code} (valid for {minutes}). "
              "Give it to the person who runs me – once they approve it, we can talk. "
              "Until then I store nothing of yours.",
    },
    "pairing_full": {
        "de": "Gerade warten schon zu viele Anfragen. Versuch es bitte später noch einmal.",
        "en": "Too many requests are waiting right now. Please try again later.",
    },
    "paired_welcome": {
        "de": "Du bist freigeschaltet – schreib mir einfach.",
        "en": "You're approved – just write to me.",
    },
    "pair_approved": {"de": "Freigeschaltet: {user} ({name}).", "en": "Approved: {user} ({name})."},
    "pair_revoked": {"de": "Zugang entzogen: {user}.", "en": "Access revoked: {user}."},
    "pair_unknown": {"de": "Zu {what} gibt es keine offene Anfrage.", "en": "There is no open request for {what}."},
    "pair_expired": {"de": "Der Code {code} ist abgelaufen.", "en": "The code {code} has expired."},
    "pair_not_approved": {
        "de": "{user} wurde nicht per Code freigeschaltet (steht es in der Einstellungs-Liste, dort entfernen).",
        "en": "{user} was not approved by code (if it is on the settings allowlist, remove it there).",
    },
    "pair_list_empty": {"de": "Keine offenen Anfragen.", "en": "No open requests."},
    "pair_list_head": {"de": "Offene Anfragen (/pair CODE schaltet frei):",
                       "en": "Open requests (/pair CODE approves):"},
    "pair_usage": {"de": "/pair – offene Anfragen, /pair CODE – freischalten, /pair entziehen ID – Zugang entziehen",
                   "en": "/pair – open requests, /pair CODE – approve, /pair revoke ID – revoke access"},

    # --- relationship ----------------------------------------------------------------------
    "relationship_head": {"de": "🤝 Wir sind: {stage} (höchstens: {limit})",
                          "en": "🤝 We are: {stage} (at most: {limit})"},
    "stage_acquaintance": {"de": "Bekannte", "en": "acquaintances"},
    "stage_friend": {"de": "Freunde", "en": "friends"},
    "stage_close_friend": {"de": "enge Freunde", "en": "close friends"},
    "stage_confidant": {"de": "Vertraute", "en": "confidants"},
    "value_familiarity": {"de": "Vertrautheit", "en": "familiarity"},
    "value_trust": {"de": "Vertrauen", "en": "trust"},
    "value_affection": {"de": "Zuneigung", "en": "affection"},
    "value_playfulness": {"de": "Verspieltheit", "en": "playfulness"},
    "value_stage": {"de": "Stufe", "en": "stage"},
    "relationship_mood": {"de": "Stimmung: {mood}", "en": "Mood: {mood}"},
    "relationship_intentions": {"de": "Was ich mir vornehme:", "en": "What I intend:"},
    "relationship_changes": {"de": "Zuletzt geändert:", "en": "Recent changes:"},
    "relationship_no_changes": {"de": "Noch keine Änderungen – das wächst langsam.",
                                "en": "No changes yet – this grows slowly."},
    "relationship_updated": {"de": "{field} aktualisiert", "en": "{field} updated"},
    "field_mood": {"de": "Stimmung", "en": "Mood"},
    "field_notes": {"de": "Notizen", "en": "Notes"},
    "field_intentions": {"de": "Vorsätze", "en": "Intentions"},
    "field_opinions": {"de": "Meinungen", "en": "Opinions"},
    "field_rituals": {"de": "Rituale", "en": "Rituals"},
    "field_in_jokes": {"de": "Insider-Witze", "en": "In-jokes"},
    "rel_asked": {"de": "{asked:+d} vorgeschlagen", "en": "{asked:+d} proposed"},
    "rel_rule_cap": {"de": "auf ±5 begrenzt", "en": "capped at ±5"},
    "rel_rule_clamp": {"de": "innerhalb 0–100 gehalten", "en": "kept within 0–100"},
    "rel_rule_up": {"de": "Mindestwerte erreicht", "en": "minimum values reached"},
    "rel_rule_down": {"de": "{detail}: 10 unter der Schwelle", "en": "{detail}: 10 below the threshold"},
    "rel_rule_freeze": {"de": "Stufe bis {detail} eingefroren", "en": "stage frozen until {detail}"},
    "rel_rule_wish": {"de": "begrenzt durch den Wunsch „{detail}“", "en": "limited by the wish '{detail}'"},
    "rel_rule_limit": {"de": "über der Grenze des Wunsches „{detail}“", "en": "above the limit of the wish '{detail}'"},

    # --- reminders ---------------------------------------------------------------------------
    "reminder_set": {"de": "⏰ Ich erinnere dich {when} an: {text}", "en": "⏰ I'll remind you {when}: {text}"},
    "reminder_once": {"de": "am {weekday}, {date} um {time}", "en": "on {weekday}, {date} at {time}"},
    "reminder_daily": {"de": "jeden Tag um {time}", "en": "every day at {time}"},
    "reminder_weekly": {"de": "jeden {weekday} um {time}", "en": "every {weekday} at {time}"},
    "weekdays": {"de": "Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag",
                 "en": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday"},
    "weekdays_short": {"de": "Mo Di Mi Do Fr Sa So", "en": "Mon Tue Wed Thu Fri Sat Sun"},
    "reminder_ask_time": {"de": "Wann genau soll ich dich erinnern? Zum Beispiel „morgen um 9“ oder „in 2 Stunden“.",
                          "en": "When exactly shall I remind you? For example “tomorrow at 9” or “in 2 hours”."},
    "reminder_ask_text": {"de": "Woran soll ich dich erinnern?", "en": "What shall I remind you of?"},
    "reminders_empty": {"de": "Du hast gerade keine Erinnerungen. Schreib zum Beispiel: "
                              "„Erinnere mich morgen um 9 an den Zahnarzt“.",
                        "en": "You have no reminders right now. Write for example: "
                              "“Remind me tomorrow at 9 to call mom”."},
    "reminders_head": {"de": "Deine Erinnerungen:", "en": "Your reminders:"},
    "reminder_delete": {"de": "✖ Löschen", "en": "✖ Delete"},
    "reminder_delete_id": {"de": "✖ #{id}", "en": "✖ #{id}"},
    "reminder_cancelled": {"de": "Gelöscht: ⏰ {text}", "en": "Deleted: ⏰ {text}"},
    "reminder_snoozed": {"de": "💤 Ich erinnere dich {when} wieder.", "en": "💤 I'll remind you again {when}."},

    # --- people ------------------------------------------------------------------------------
    "people_empty": {"de": "Ich kenne noch niemanden aus deinem Leben – "
                           "erzähl mir von den Menschen, die dir wichtig sind.",
                     "en": "I don't know anyone from your life yet – tell me about the people who matter to you."},
    "people_head": {"de": "Menschen in deinem Leben:", "en": "People in your life:"},
    "date_birthday": {"de": "Geburtstag", "en": "Birthday"},
    "date_anniversary": {"de": "Jahrestag", "en": "Anniversary"},
    "date_other": {"de": "Jährlicher Tag", "en": "Yearly date"},
    "people_usage": {"de": "/people 3 – mehr über #3 · /people umbenennen 3 Mia · /people zusammenführen 3 5 · "
                           "/people vergessen 3",
                     "en": "/people 3 – more about #3 · /people rename 3 Mia · /people merge 3 5 · /people forget 3"},
    "people_unnamed": {"de": "(Name unbekannt)", "en": "(name unknown)"},
    "people_also": {"de": "auch: {names}", "en": "also: {names}"},
    "people_relation": {"de": "{a} ist {relation} von {b}", "en": "{a} is {relation} of {b}"},
    "people_before": {"de": "früher: {relation} (bis {date})", "en": "before: {relation} (until {date})"},
    "people_facts": {"de": "Was ich weiß:", "en": "What I know:"},
    "people_no_facts": {"de": "Sonst weiß ich noch nichts.", "en": "I know nothing else yet."},
    "people_renamed": {"de": "Umbenannt: {old} heißt jetzt {new}.", "en": "Renamed: {old} is now {new}."},
    "people_merged": {"de": "Zusammengeführt: {name} ({names}).", "en": "Merged: {name} ({names})."},
    "people_forget_confirm": {"de": "Soll ich {name} vergessen – mit allem, was ich über {name} weiß "
                                    "({notes})?",
                              "en": "Shall I forget {name} – with everything I know about them ({notes})?"},
    "people_forget_yes": {"de": "Ja, vergessen", "en": "Yes, forget"},
    "people_forget_button": {"de": "Vergessen", "en": "Forget"},
    "people_forgotten": {"de": "Vergessen: {name} und {notes}.", "en": "Forgotten: {name} and {notes}."},
    "people_unknown": {"de": "Diese Person kenne ich nicht. /people zeigt alle.",
                       "en": "I don't know that person. /people lists everyone."},

    "no_model_hint": {
        "de": "Kein Sprachmodell antwortet unter {url}. Starte Ollama (ollama serve) oder setze MNEMO_CHAT_BASE_URL, "
              "MNEMO_CHAT_MODEL und MNEMO_CHAT_API_KEY in .env.",
        "en": "No language model answers at {url}. Start Ollama (ollama serve) or set MNEMO_CHAT_BASE_URL, "
              "MNEMO_CHAT_MODEL and MNEMO_CHAT_API_KEY in .env.",
    },
    "console_hello": {
        "de": "{name} hört zu. Schreib etwas (Strg-D beendet, /help zeigt Befehle).",
        "en": "{name} is listening. Type something (Ctrl-D quits, /help shows commands).",
    },
    "console_reaction": {
        "de": "({name} reagiert auf deine Nachricht mit {emoji})",
        "en": "({name} reacts to your message with {emoji})",
    },

    # Forgetting reaches the copies (bot/forgetting.py): what a press answer says besides the fact itself
    "copies_rewritten": {"de": "Auch umgeschrieben, damit nichts mehr davon darin steht: {what}.",
                         "en": "Also rewritten so that none of it is left in them: {what}."},
    "copies_diary_one": {"de": "1 Tagebucheintrag", "en": "1 diary entry"},
    "copies_diary_many": {"de": "{n} Tagebucheinträge", "en": "{n} diary entries"},
    "copies_thoughts_one": {"de": "1 Gedanke", "en": "1 thought"},
    "copies_thoughts_many": {"de": "{n} Gedanken", "en": "{n} thoughts"},
    "copies_topics_one": {"de": "1 offenes Thema", "en": "1 open topic"},
    "copies_topics_many": {"de": "{n} offene Themen", "en": "{n} open topics"},
    "copies_summary": {"de": "die Zusammenfassung unseres Gesprächs", "en": "the summary of our conversation"},
    "copies_relationship": {"de": "meine Notizen über uns beide", "en": "my notes on the two of us"},
    "undo_final": {"de": "Das habe ich endgültig vergessen, da gibt es nichts wiederherzustellen.",
                   "en": "I forgot that for good; there is nothing to restore."},
    # --- channels: commands run once, choices in the terminal, whose choice it is ---
    "command_interrupted": {
        "de": "Dieser Befehl wurde durch einen Neustart unterbrochen. Ich wiederhole ihn nicht von selbst – "
              "schick ihn noch einmal, wenn du ihn noch willst.",
        "en": "This command was cut off by a restart. I won't repeat it on my own – send it again if you still "
              "want it.",
    },
    "choice_not_yours": {"de": "Das hat jemand anderes gefragt; nur diese Person kann hier wählen.",
                         "en": "Someone else asked this; only they can choose here."},
    "choose_number": {"de": "Antworte mit einer Zahl:", "en": "Answer with a number:"},
    "choice_out_of_range": {"de": "Bitte eine Zahl von 1 bis {last}.", "en": "Please a number from 1 to {last}."},
    # --- consistency: /undo lines, /settings, `mnemo pair list` in the interface's language ----------------
    "undo_line": {"de": "• {item}{number} {action}{text}", "en": "• {item}{number} {action}{text}"},
    "undo_item_note": {"de": "Notiz", "en": "Note"},
    "undo_item_profile": {"de": "Profileintrag", "en": "Profile entry"},
    "undo_item_thought": {"de": "Gedanke", "en": "Thought"},
    "undo_item_diary": {"de": "Tagebucheintrag", "en": "Diary entry"},
    "undo_item_topic": {"de": "Offenes Thema", "en": "Open topic"},
    "undo_item_summary": {"de": "Zusammenfassung", "en": "Summary"},
    "undo_item_rule": {"de": "Regel", "en": "Rule"},
    "undo_item_relationship": {"de": "Unsere Beziehung", "en": "Our relationship"},
    "undo_item_person": {"de": "Person", "en": "Person"},
    "undo_item_person_relation": {"de": "Verbindung zwischen Personen", "en": "Link between people"},
    "undo_item_reminder": {"de": "Erinnerung", "en": "Reminder"},
    "undo_item_other": {"de": "Eintrag", "en": "Entry"},
    "undo_action_create": {"de": "angelegt", "en": "created"},
    "undo_action_update": {"de": "geändert", "en": "changed"},
    "undo_action_close": {"de": "beendet", "en": "closed"},
    "undo_action_delete": {"de": "gelöscht", "en": "deleted"},
    "undo_action_restore": {"de": "wiederhergestellt", "en": "restored"},
    "undo_action_link": {"de": "verknüpft", "en": "linked"},
    "undo_action_merge": {"de": "zusammengeführt", "en": "merged"},
    "undo_action_revert": {"de": "zurückgesetzt", "en": "reverted"},
    "undo_action_erase": {"de": "endgültig vergessen", "en": "forgotten for good"},
    "undo_action_other": {"de": "geändert", "en": "changed"},
    "settings_lines": {
        "de": "Tagebuch: {diary} Uhr (zuschicken: {push})\nNachdenken: {reflection} Uhr\nAktive Zeiten: {hours} Uhr\n"
              "Nachfragen von mir: {checkins}",
        "en": "Diary: {diary} (sent to you: {push})\nReflection: {reflection}\nActive hours: {hours}\n"
              "Check-ins: {checkins}",
    },
    "settings_expect_onoff": {"de": "an oder aus", "en": "on or off"},
    "settings_expect_time": {"de": "eine Uhrzeit wie 23:30", "en": "a time like 23:30"},
    "settings_expect_hours": {"de": "Stunden wie 9-21", "en": "hours like 9-21"},
    "pair_list_approved_head": {"de": "Freigeschaltet:", "en": "Approved:"},
    "pair_list_approved": {"de": "{user}  {name}  freigeschaltet am {when} von {by}",
                           "en": "{user}  {name}  approved {when} by {by}"},
    "pair_list_revoked": {"de": ", entzogen am {when} von {by}", "en": ", revoked {when} by {by}"},
    "pair_by_cli": {"de": "der Kommandozeile", "en": "the command line"},

    # Matrix: an encrypted message whose key never came
    "matrix_undecryptable": {
        "de": "Diese verschlüsselte Nachricht kann ich nicht lesen: Der Schlüssel dafür ist nicht bei mir angekommen. "
              "Schreib sie mir bitte noch einmal.",
        "en": "I can't read this encrypted message: its key never reached me. Please send it again.",
    },
    "matrix_undecryptable_ours": {
        "de": "Diese verschlüsselte Nachricht kann ich nicht lesen – das liegt an mir, nicht an dir: Ich hatte meine "
              "Schlüssel verloren und habe jetzt neue. Was du ab jetzt schreibst, kann ich wieder lesen.",
        "en": "I can't read this encrypted message – that is my fault, not yours: I had lost my keys and have new ones "
              "now. What you write from now on I can read again.",
    },

    # Learning and proactive messages: /think and /writediary say truly why they failed.
    "think_unusable": {
        "de": "Mein Sprachmodell hat geantwortet, aber nichts, womit ich etwas anfangen kann – ich habe nichts "
              "gespeichert. Versuch es gleich noch einmal.",
        "en": "My language model answered, but with nothing I can use – I saved nothing. Try again in a moment.",
    },
    "diary_unusable": {
        "de": "Mein Sprachmodell hat geantwortet, aber keinen brauchbaren Tagebucheintrag – ich habe nichts "
              "gespeichert. Versuch es gleich noch einmal.",
        "en": "My language model answered, but not with a diary entry I can use – I saved nothing. "
              "Try again in a moment.",
    },
    "job_error": {
        "de": "Das hat gerade nicht geklappt – bei mir ist ein Fehler aufgetreten. Versuch es später noch einmal.",
        "en": "That didn't work – something went wrong on my side. Please try again later.",
    },
    # Incognito: answered from the memory as it is, nothing of the messages kept
    "incognito_on": {
        "de": "🕶️ Inkognito ist an, bis du /incognito aus schreibst. Ich antworte mit dem, was ich schon weiß, "
              "aber von dem, was du jetzt schreibst, speichere ich nichts: kein Verlauf, keine Notizen, "
              "kein Tagebuch. Nur dass es diese Zeit gab, steht im Protokoll.",
        "en": "🕶️ Incognito is on until you write /incognito off. I answer with what I already know, but I keep "
              "nothing of what you write now: no log, no notes, no diary. Only that this stretch happened is "
              "logged.",
    },
    "incognito_on_until": {
        "de": "🕶️ Inkognito ist an bis {until}. Ich antworte mit dem, was ich schon weiß, aber von dem, was du "
              "jetzt schreibst, speichere ich nichts: kein Verlauf, keine Notizen, kein Tagebuch. Nur dass es "
              "diese Zeit gab, steht im Protokoll. Früher beenden: /incognito aus",
        "en": "🕶️ Incognito is on until {until}. I answer with what I already know, but I keep nothing of what "
              "you write now: no log, no notes, no diary. Only that this stretch happened is logged. "
              "To end it sooner: /incognito off",
    },
    "incognito_off": {
        "de": "🕶️ Inkognito ist aus ({messages}, nichts davon gespeichert). Ab jetzt merke ich mir "
              "wieder, was du schreibst.",
        "en": "🕶️ Incognito is off ({messages}, none of them kept). From now on I remember what you "
              "write again.",
    },
    "incognito_ended_by_time": {
        "de": "🕶️ Inkognito ist seit {until} vorbei ({messages}, nichts davon gespeichert). "
              "Diese Nachricht merke ich mir wieder.",
        "en": "🕶️ Incognito ended at {until} ({messages}, none of them kept). I remember this message "
              "again.",
    },
    "incognito_not_on": {"de": "Inkognito ist gerade nicht an.", "en": "Incognito is not on."},
    "incognito_status_on": {"de": "🕶️ Inkognito ist an ({until}); bisher {messages}, nichts davon gespeichert.",
                            "en": "🕶️ Incognito is on ({until}); {messages} so far, none of them kept."},
    "incognito_status_off": {"de": "Inkognito ist aus: ich merke mir, was du schreibst. Einschalten: /incognito an",
                             "en": "Incognito is off: I remember what you write. To switch it on: /incognito on"},
    "incognito_usage": {
        "de": "So geht es: /incognito an (bis /incognito aus), /incognito 2h, /incognito 30 min, "
              "/incognito bis morgen (höchstens 7 Tage), /incognito aus oder /incognito status.",
        "en": "Like this: /incognito on (until /incognito off), /incognito 2h, /incognito 30 min, "
              "/incognito until tomorrow (at most 7 days), /incognito off or /incognito status.",
    },
    "incognito_no_reminder": {
        "de": "Im Inkognito-Modus stelle ich keine Erinnerungen – dafür müsste ich mir etwas merken. "
              "Schreib /incognito aus und frag mich dann noch einmal.",
        "en": "I don't set reminders in incognito – I would have to keep something for that. "
              "Write /incognito off and ask me again.",
    },
    "incognito_forever": {"de": "bis /incognito aus", "en": "until /incognito off"},
    "incognito_until": {"de": "bis {until}", "en": "until {until}"},
    **COMMAND_TEXTS,
    **PROACTIVE_TEXTS,
    **HISTORY_TEXTS,
    **REVIEW_TEXTS,
    **WEB_TEXTS,
    **VOICE_TEXTS,
    **HELP_TEXTS,
    **PICTURE_TEXTS,
    **DOCUMENT_TEXTS,
    **PAGE_TEXTS,
    **COUNT_TEXTS,
    **HISTORY_ERRORS,
    **IMPORT_TEXTS,
}


def addressed(key: str, group: bool) -> str:
    """The key of the text as said to a group (`rules_head` -> `rules_head_group`: "ihr", not "du") where it has a
    group form, else `key` itself."""
    return f"{key}_group" if group and f"{key}_group" in TEXTS else key


def t(lang: str, key: str, **values: object) -> str:
    """The text `key` in the language, German when the language is unknown."""
    entry = TEXTS[key]
    return entry.get(lang, entry["de"]).format(**values)


def counted(lang: str, n: float, noun: str, shown: str | None = None) -> str:
    """A count with its noun in the right number ('1 Notiz', '3 Notizen'); `noun` names a pair in COUNT_TEXTS,
    `shown` the number as written when it is not just `n` ('1.200')."""
    return t(lang, f"count_{noun}_one" if n == 1 else f"count_{noun}_many", n=f"{n:g}" if shown is None else shown)
