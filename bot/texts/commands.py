"""What the chat's commands (/help, /memories, /forget, /rules, /settings, /undo, /why …) answer, in German
(default) and English; merged into `bot.texts.TEXTS`."""
from __future__ import annotations

COMMAND_TEXTS: dict[str, dict[str, str]] = {
    "start": {
        "de": "Hallo! Ich bin {name}. Schreib mir einfach – ich merke mir, was dir wichtig ist. /help zeigt, "
              "wie du ansehen und korrigieren kannst, was ich mir gemerkt habe.",
        "en": "Hi! I'm {name}. Just write to me – I remember what matters to you. /help shows how to see "
              "and correct my memories.",
    },
    "help_head": {"de": "Das kannst du mit mir machen:", "en": "What you can do:"},
    "unknown_command": {"de": "Den Befehl kenne ich nicht. /help zeigt alle.",
                        "en": "I don't know that command. /help lists them all."},
    "memories_empty": {"de": "Ich habe mir noch nichts über dich gemerkt.",
                       "en": "I haven't noted anything about you yet."},
    "memories_empty_group": {"de": "Ich habe mir noch nichts über euch gemerkt.",
                             "en": "I haven't noted anything about this group yet."},
    "memories_head": {"de": "Was ich mir gemerkt habe ({first}–{last} von {total}):",
                      "en": "What I remember ({first}–{last} of {total}):"},
    "memories_found": {"de": "Dazu habe ich gefunden:", "en": "This is what I found:"},
    "memories_none_found": {"de": "Dazu habe ich nichts gefunden.", "en": "I found nothing about that."},
    "forget_usage": {"de": "Was soll ich vergessen? /forget 12 oder /forget Stichwort",
                     "en": "What shall I forget? /forget 12 or /forget keyword"},
    "forget_confirm": {"de": "Soll ich das vergessen?", "en": "Shall I forget this?"},
    "forget_pick": {"de": "Was davon soll ich vergessen?", "en": "Which memory shall I forget?"},
    "forget_done": {"de": "Vergessen: {text}", "en": "Forgotten: {text}"},
    "forget": {"de": "Vergessen", "en": "Forget"},
    "cancel": {"de": "Abbrechen", "en": "Cancel"},
    "cancelled": {"de": "Abgebrochen – nichts geändert.", "en": "Cancelled – nothing changed."},
    "diary_empty": {"de": "Mein Tagebuch ist noch leer.", "en": "My diary is still empty."},
    "rules_empty": {"de": "Ich habe noch keine Regeln von dir gelernt.",
                    "en": "I haven't learned any rules from you yet."},
    "rules_empty_group": {"de": "Ich habe noch keine Regeln von euch gelernt.",
                          "en": "I haven't learned any rules from this group yet."},
    "rules_head": {"de": "Regeln, die du mir beigebracht hast ({first}–{last} von {total}):",
                   "en": "Rules you taught me ({first}–{last} of {total}):"},
    "rules_head_group": {"de": "Regeln, die ihr mir beigebracht habt ({first}–{last} von {total}):",
                         "en": "Rules this group taught me ({first}–{last} of {total}):"},
    "rules_by_word": {"de": "Auch per Nachricht: /rules aus 7, /rules an 7, /rules löschen 7",
                      "en": "By message too: /rules off 7, /rules on 7, /rules delete 7"},
    "rules_usage": {"de": "So geht's: /rules zeigt die Regeln; /rules aus 7, /rules an 7 oder /rules löschen 7 "
                          "schaltet Regel #7 aus, wieder an oder löscht sie.",
                    "en": "Like this: /rules shows the rules; /rules off 7, /rules on 7 or /rules delete 7 switches "
                          "rule #7 off, on again or deletes it."},
    "rule_unknown": {"de": "Eine Regel #{id} gibt es nicht – /rules zeigt alle.",
                     "en": "There is no rule #{id} – /rules shows them all."},
    "rule_unchanged": {"de": "Regel #{id} ist {status} – daran ändert das nichts.",
                       "en": "Rule #{id} is {status} – that changes nothing."},
    "rule_active": {"de": "aktiv", "en": "active"},
    "rule_disabled": {"de": "aus", "en": "off"},
    "rule_pending": {"de": "wartet auf dein Ja", "en": "waiting for your yes"},
    "rule_pending_group": {"de": "wartet auf euer Ja", "en": "waiting for the group's yes"},
    "rule_off": {"de": "Aus #{id}", "en": "Off #{id}"},
    "rule_on": {"de": "An #{id}", "en": "On #{id}"},
    "rule_delete": {"de": "Löschen #{id}", "en": "Delete #{id}"},
    "rule_turned_off": {"de": "Regel #{id} ist aus.", "en": "Rule #{id} is off."},
    "rule_turned_on": {"de": "Regel #{id} ist wieder an.", "en": "Rule #{id} is on again."},
    "rule_deleted": {"de": "Regel #{id} ist gelöscht.", "en": "Rule #{id} is deleted."},
    "profile_empty": {"de": "Dein Profil ist noch leer.", "en": "Your profile is still empty."},
    "profile_head": {"de": "Dein Profil:", "en": "Your profile:"},
    "profile_empty_group": {"de": "Das Profil dieser Gruppe ist noch leer.",
                            "en": "This group's profile is still empty."},
    "profile_head_group": {"de": "Das Profil dieser Gruppe:", "en": "This group's profile:"},
    "thoughts_empty": {"de": "Ich habe noch keine Gedanken notiert.", "en": "I haven't written down any thoughts yet."},
    "thoughts_head": {"de": "Meine letzten Gedanken:", "en": "My latest thoughts:"},
    "topics_empty": {"de": "Gerade steht nichts offen, wonach ich fragen wollte.",
                     "en": "Nothing open I meant to ask about."},
    "topics_head": {"de": "Worauf ich zurückkommen möchte:", "en": "What I want to come back to:"},
    "export_ready": {"de": "Hier sind alle deine Daten.", "en": "Here is all your data."},
    "deleteme_confirm": {
        "de": "Soll ich wirklich alles über dich löschen – Nachrichten, Erinnerungen, Profil, Regeln? "
              "Das lässt sich nicht rückgängig machen.",
        "en": "Shall I really delete everything about you – messages, memories, profile, rules? This cannot be undone.",
    },
    "deleteme_private_only": {
        "de": "/deleteme löscht alles, was ich über dich weiß – das geht nur in unserem privaten Chat. Das Gedächtnis "
              "dieser Gruppe bleibt, wie es ist; einzelne Erinnerungen der Gruppe löscht ein Admin mit /forget.",
        "en": "/deleteme deletes everything I know about you – that works only in our private chat. This group's "
              "memory stays as it is; an admin deletes single group memories with /forget.",
    },
    "deleteme_yes": {"de": "Ja, alles löschen", "en": "Yes, delete everything"},
    "deleteme_done": {"de": "Erledigt. Ich habe alles über dich gelöscht.",
                      "en": "Done. I have deleted everything about you."},
    "deleteme_shared_tools": {
        "de": "Was die Werkzeug-Server {servers} für alle gemeinsam speichern, kann ich nicht löschen – "
              "frag dafür den Betreiber.",
        "en": "What the tool servers {servers} keep for everyone together I cannot delete – ask the operator.",
    },
    "settings_head": {"de": "Deine Einstellungen:", "en": "Your settings:"},
    "settings_usage": {
        "de": "Ändern mit z. B. /settings tagebuch 23:30, /settings tagebuch an, /settings nachdenken 22:00, "
              "/settings zeiten 9-21, /settings nachfragen aus, /settings morgen 7:30 (aus, täglich, gelernt, "
              "leer gruß, leer nichts), /settings geburtstage vortag, /settings ort 52.52,13.40, "
              "/settings hinweise an, /settings zeitzone Europe/Berlin (oder eine Stadt wie Wien, New York, Tokio; "
              "standard: die des Servers), /settings sprache en (de, en), /settings land AT (oder Österreich, UK, "
              "USA; standard: aus deiner Zeitzone)",
        "en": "Change with e.g. /settings diary 23:30, /settings diary on, /settings reflection 22:00, "
              "/settings hours 9-21, /settings checkins off, /settings morning 7:30 (off, daily, learned, "
              "empty greeting, empty nothing), /settings birthdays day before, /settings place 52.52,13.40, "
              "/settings notices on, /settings timezone Europe/Berlin (or a city like Vienna, New York, Tokyo; "
              "default: the server's), /settings language de (de, en), /settings country AT (or Austria, UK, USA; "
              "default: from your time zone)",
    },
    "settings_bad": {"de": "Das verstehe ich nicht – erwartet: {expected}",
                     "en": "I don't understand – expected: {expected}"},
    "settings_zone": {"de": "Zeitzone: {zone}, dort ist es jetzt {time} Uhr",
                      "en": "Time zone: {zone}, it is {time} there now"},
    "settings_zone_default": {"de": "Zeitzone: {zone}, die des Servers", "en": "Time zone: {zone}, the server's"},
    "settings_zone_unknown": {
        "de": "Die Zeitzone „{zone}“ kenne ich nicht – nichts geändert. Schreib z. B. /settings zeitzone Europe/Berlin "
              "oder eine Stadt wie München, Wien, New York oder Tokio.",
        "en": "I don't know the time zone \"{zone}\" – nothing changed. Write e.g. /settings timezone Europe/Berlin or "
              "a city like Munich, Vienna, New York or Tokyo.",
    },
    "settings_expect_zone": {"de": "eine Zeitzone wie Europe/Berlin oder eine Stadt",
                             "en": "a time zone like Europe/Berlin or a city"},
    "settings_saved": {"de": "Gespeichert.", "en": "Saved."},
    "settings_language": {"de": "Sprache: {language}", "en": "Language: {language}"},
    "settings_language_default": {"de": "Sprache: {language} (die des Servers)",
                                  "en": "Language: {language} (the server's)"},
    "language_de": {"de": "Deutsch", "en": "German"},
    "language_en": {"de": "Englisch", "en": "English"},
    "settings_expect_language": {"de": "de oder en (Deutsch oder Englisch)", "en": "de or en (German or English)"},
    "settings_country": {"de": "Hilfsnummern in einer Krise: {country}", "en": "Help numbers in a crisis: {country}"},
    "settings_country_zone": {"de": "Hilfsnummern in einer Krise: {country} (aus deiner Zeitzone)",
                              "en": "Help numbers in a crisis: {country} (from your time zone)"},
    "settings_country_default": {"de": "Hilfsnummern in einer Krise: {country} (die des Servers)",
                                 "en": "Help numbers in a crisis: {country} (the server's)"},
    "settings_country_world": {"de": "weltweit (findahelpline.com)", "en": "worldwide (findahelpline.com)"},
    "settings_country_unknown": {
        "de": "Das Land „{country}“ kenne ich nicht – nichts geändert. Schreib z. B. /settings land DE, "
              "/settings land Österreich oder /settings land UK.",
        "en": "I don't know the country \"{country}\" – nothing changed. Write e.g. /settings country US, "
              "/settings country Ireland or /settings country UK.",
    },
    "settings_expect_country": {"de": "ein Land wie DE, Österreich oder UK", "en": "a country like US, Ireland or UK"},
    "on": {"de": "an", "en": "on"},
    "off": {"de": "aus", "en": "off"},
    "think_nothing": {"de": "Ich habe nachgedacht, aber nichts Neues gefunden.",
                      "en": "I reflected but found nothing new."},
    "diary_nothing": {"de": "Heute gab es kein Gespräch – also auch keinen Eintrag.",
                      "en": "No conversation today – so no entry."},
    "job_failed": {"de": "Das hat gerade nicht geklappt – mein Sprachmodell antwortet nicht.",
                   "en": "That didn't work – my language model is not answering."},
    "not_yet": {
        "de": "Das kann ich noch nicht auf Knopfdruck – Nachdenken und Tagebuch kommen mit dem Zeitplaner.",
        "en": "I can't do that on demand yet – reflection and the diary come with the scheduler.",
    },
    "undo_nothing": {"de": "Es gibt nichts, was ich rückgängig machen könnte.", "en": "There is nothing to undo."},
    "undo_done": {"de": "Rückgängig gemacht:", "en": "Undone:"},
    "undo_reminder_fired": {
        "de": "Die Erinnerung „{text}“ ist schon gekommen – das nehme ich nicht mehr zurück. Eine, die noch kommen "
              "soll, beendest du mit /reminders.",
        "en": "The reminder “{text}” has already come – I won't take that back. To stop one that is still to come, "
              "use /reminders.",
    },
    "why_nothing": {
        "de": "Dazu habe ich gerade keine Erinnerung benutzt.",
        "en": "I didn't use any memory for that just now.",
    },
    "why_head": {"de": "Das habe ich mir gemerkt – und daher stammt es:",
                 "en": "This is what I noted – and where it came from:"},
    "why_source": {"de": "du schriebst am {when}", "en": "you wrote on {when}"},
    "why_source_forwarded": {"de": "du hast am {when} weitergeleitet (die Worte eines anderen)",
                             "en": "you forwarded on {when} (someone else's words)"},
    "why_no_source": {"de": "(keine Quelle gespeichert)", "en": "(no source stored)"},
    "why_wrong": {"de": "Falsch #{id}", "en": "Wrong #{id}"},
    "why_outdated": {"de": "Veraltet #{id}", "en": "Outdated #{id}"},
    "why_forget": {"de": "Vergessen #{id}", "en": "Forget #{id}"},
    "why_closed": {"de": "Erledigt – das nehme ich nicht mehr an: {text}", "en": "Done – I no longer assume: {text}"},
    "button_stale": {"de": "Das ist schon erledigt.", "en": "That's already done."},
    "button_unknown": {"de": "Diese Auswahl gibt es nicht (mehr).", "en": "That choice doesn't exist (anymore)."},
    "next": {"de": "Weiter ▶", "en": "Next ▶"},
    "back": {"de": "◀ Zurück", "en": "◀ Back"},
    "not_text_kind": {"de": "Mit dieser Art von Nachricht kann ich leider nichts anfangen.",
                      "en": "Sorry, I can't do anything with this kind of message."},
    "refused": {"de": "Ich spreche nur mit Menschen, die mein Betreiber freigeschaltet hat.",
                "en": "I only talk to people my operator has allowed."},
    "thinking": {"de": "…", "en": "…"},
    "react_with": {"de": "Reagiere mit:", "en": "React with:"},
    "export_as_text": {"de": "Die Datei ließ sich nicht hochladen – hier sind deine Daten als Text (gekürzt):",
                       "en": "The file could not be uploaded – here is your data as text (shortened):"},
    "failed": {
        "de": "Da ist bei mir etwas schiefgegangen – versuch es bitte gleich noch einmal.",
        "en": "Something went wrong on my side – please try again in a moment.",
    },

}
