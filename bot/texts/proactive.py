"""What mnemo says about the messages it sends on its own: /checkins warum, the learned hours, the morning brief,
yearly dates and the weather place in /settings (German by default, and English)."""
from __future__ import annotations

PROACTIVE_TEXTS: dict[str, dict[str, str]] = {
    # /settings: the morning brief, yearly dates, the place for the weather
    "settings_expect_morning": {"de": "eine Uhrzeit wie 7:30, aus, täglich, gelernt, leer gruß oder leer nichts",
                                "en": "a time like 7:30, off, daily, learned, empty greeting or empty nothing"},
    "settings_expect_dates": {"de": "tag oder vortag", "en": "day or day before"},
    "settings_expect_place": {"de": "Breite,Länge wie 52.52,13.40", "en": "latitude,longitude like 52.52,13.40"},
    "settings_morning_off": {"de": "Morgengruß: aus", "en": "Morning brief: off"},
    "settings_morning": {"de": "Morgengruß: {time} Uhr, {days}; ohne Neuigkeiten: {empty}",
                         "en": "Morning brief: {time}, {days}; with nothing to say: {empty}"},
    "settings_morning_daily": {"de": "jeden Tag", "en": "every day"},
    "settings_morning_learned": {"de": "an den Tagen, an denen du morgens liest",
                                 "en": "on the days you read in the morning"},
    "settings_morning_empty_greeting": {"de": "ein kurzer Gruß", "en": "a short greeting"},
    "settings_morning_empty_nothing": {"de": "nichts", "en": "nothing"},
    "settings_dates_day": {"de": "Geburtstage und Jahrestage: am Tag selbst",
                           "en": "Birthdays and anniversaries: on the day"},
    "settings_dates_eve": {"de": "Geburtstage und Jahrestage: am Vortag",
                           "en": "Birthdays and anniversaries: the day before"},
    "settings_place": {"de": "Ort fürs Wetter: {place}", "en": "Place for the weather: {place}"},
    "settings_place_none": {"de": "Ort fürs Wetter: keiner", "en": "Place for the weather: none"},
    # /checkins warum and the learned hours in /settings
    "checkins_time": {"de": "{day} {date:%d.%m.} um {date:%H:%M}", "en": "{day} {date:%d %b} at {date:%H:%M}"},
    "checkins_usage": {"de": "So geht's: /checkins warum – warum ich dir zuletzt (nicht) von mir aus geschrieben "
                             "habe, und wann frühestens wieder.",
                       "en": "Usage: /checkins why – why I last did (or didn't) write to you first, and when I could "
                             "next."},
    "checkins_group": {"de": "In Gruppen schreibe ich nie von mir aus.", "en": "I never write first in a group."},
    "checkins_none": {"de": "Ich habe noch nicht entschieden, ob ich dir von mir aus schreibe – das prüfe ich alle "
                            "15 Minuten.",
                      "en": "I haven't decided yet whether to write to you first – I check every 15 minutes."},
    "checkins_checked": {"de": "Zuletzt geprüft: {when}.", "en": "Last checked: {when}."},
    "checkins_checked_old_zone": {"de": "Zuletzt geprüft: {when} – da galt noch deine vorige Zeitzone.",
                                  "en": "Last checked: {when} – your previous time zone still applied then."},
    "checkins_rule_disabled": {"de": "Du hast Nachfragen von mir ausgeschaltet (/settings nachfragen an).",
                               "en": "You switched my check-ins off (/settings checkins on)."},
    "checkins_rule_never_wrote": {"de": "Du hast mir noch nie geschrieben.", "en": "You have never written to me."},
    "checkins_rule_outside_hours": {"de": "Es war außerhalb deiner Zeiten ({hours} Uhr).",
                                    "en": "It was outside your hours ({hours})."},
    "checkins_rule_recent": {"de": "Wir hatten uns gerade erst geschrieben.", "en": "We had only just talked."},
    "checkins_rule_incognito": {"de": "Wir schreiben uns gerade inkognito – da melde ich mich nicht von selbst.",
                                "en": "We are talking in incognito – I do not write first then."},
    "checkins_rule_budget": {"de": "Ich hatte dir in den letzten 20 Stunden schon von mir aus geschrieben.",
                             "en": "I had already written to you first in the last 20 hours."},
    "checkins_rule_unanswered": {"de": "Meine letzte Nachricht an dich ist noch unbeantwortet – zweimal hintereinander "
                                       "schreibe ich nicht.",
                                 "en": "My last message to you is still unanswered – I never write twice in a row."},
    "checkins_rule_unlikely_hour": {"de": "Um diese Zeit liest du meistens nicht; an diesem Tag eher {likely} Uhr.",
                                    "en": "You don't usually read at this time; on this day rather {likely}."},
    "checkins_rule_waiting": {"de": "Es gab nichts Besonderes, und still war es noch nicht lange genug: ich warte "
                                    "{silence} nach deiner letzten Nachricht.",
                              "en": "There was nothing in particular, and it hadn't been quiet long enough: I wait "
                                    "{silence} after your last message."},
    "checkins_rule_away": {"de": "Du hast gesagt, dass du weg bist; vor dem {back} schreibe ich dir nicht von mir aus.",
                           "en": "You said you are away; I won't write to you on my own before {back}."},
    "checkins_day": {"de": "{date:%d.%m.}", "en": "{date:%d %b}"},
    "checkins_rule_sent": {"de": "Da habe ich dir geschrieben.", "en": "I wrote to you then."},
    "checkins_rule_declined": {"de": "Ich wollte dir schreiben, habe es aber gelassen.",
                               "en": "I meant to write to you, but let it be."},
    "checkins_rule_other": {"de": "Grund: {reason}.", "en": "Reason: {reason}."},
    "checkins_backoff": {"de": "Auf meine letzten {messages} hast du nicht innerhalb von {hours} "
                               "geantwortet – deshalb warte ich {factor}-mal so lange wie sonst. Eine Antwort "
                               "setzt das zurück.",
                         "en": "You didn't answer my last {messages} within {hours} – so I wait "
                               "{factor} times as long as usual. An answer resets that."},
    "checkins_next": {"de": "Frühestens schreibe ich dir {when}.", "en": "The earliest I'd write to you: {when}."},
    "checkins_next_none": {"de": "Solange sich daran nichts ändert, schreibe ich dir nicht von mir aus.",
                           "en": "As long as that doesn't change, I won't write to you first."},
    "checkins_next_after_answer": {"de": "Meine letzte Nachricht an dich ist noch unbeantwortet: bis du mir "
                                         "schreibst, schreibe ich nicht wieder von mir aus.",
                                   "en": "My last message to you is still unanswered: until you write to me, I won't "
                                         "write first again."},
    "checkins_after_sent": {"de": "Jetzt warte ich auf deine Antwort, bevor ich wieder von mir aus schreibe.",
                            "en": "Now I wait for your answer before I write first again."},
    "settings_rhythm": {"de": "Wann du meist liest (gelernt): {hours} Uhr",
                        "en": "When you usually read (learned): {hours}"},
    "settings_rhythm_none": {"de": "Wann du meist liest, lerne ich noch – bis dahin gelten deine aktiven Zeiten.",
                             "en": "I'm still learning when you usually read – until then your active hours apply."},
    # the saved notice after an extraction (/settings notices an|aus)
    "saved_notice": {"de": "💾 gemerkt: {items}", "en": "💾 noted: {items}"},
    "saved_undo": {"de": "Rückgängig", "en": "Undo"},
    "saved_undone": {"de": "↩️ zurückgenommen: {items}", "en": "↩️ taken back: {items}"},
    "saved_undone_notice": {"de": "Zurückgenommen.", "en": "Taken back."},
    "saved_later": {"de": "Das kann ich allein nicht mehr zurücknehmen: Spätere Änderungen bauen darauf auf. "
                          "/undo nimmt die neueste Änderung zurück.",
                    "en": "I can't take that back on its own any more: later changes build on it. "
                          "/undo takes back the newest change."},
    "settings_notices": {"de": "Gemerkt-Hinweise im Chat: {state}", "en": "Saved notices in the chat: {state}"},
    "settings_notices_private": {"de": "Gemerkt-Hinweise gibt es nur im privaten Chat.",
                                 "en": "Saved notices exist only in a private chat."},
}
