"""What the web page says, and what the chat says about it, in German (default) and English.

Keys of the page itself start with 'page_'; the chat's answers to /web with 'web_'. Merged into bot.texts.TEXTS.
"""
from __future__ import annotations

PAGE_TEXTS: dict[str, dict[str, str]] = {
    "web_off": {
        "de": "Die Webseite ist nicht eingeschaltet. Der Betreiber schaltet sie mit MNEMO_WEB_LISTEN ein.",
        "en": "The web page is not switched on. The operator switches it on with MNEMO_WEB_LISTEN.",
    },
    "web_in_group": {
        "de": "Hier sähen alle den Link. Das Gedächtnis dieser Gruppe zeige ich im Browser nur mnemos Admins: "
              "schreib mir /web im privaten Chat.",
        "en": "Everyone here would see the link. I show this group's memory in the browser only to mnemo's "
              "admins: write /web to me in a private chat.",
    },
    "web_link": {
        "de": "Dein Gedächtnis im Browser: {link}\nDer Link gilt {minutes} Minuten und nur einmal. "
              "Gib ihn niemandem weiter.",
        "en": "Your memory in the browser: {link}\nThe link works for {minutes} minutes and only once. "
              "Don't pass it on.",
    },
    "page_title": {"de": "Dein Gedächtnis bei {name}", "en": "Your memory at {name}"},
    "page_group_title": {"de": "Gedächtnis der Gruppe {group}", "en": "Memory of the group {group}"},
    "page_login_title": {"de": "Anmelden", "en": "Log in"},
    "page_login_text": {
        "de": "Mit diesem Link meldest du dich an. Er gilt nur einmal.",
        "en": "This link logs you in. It works only once.",
    },
    "page_login_button": {"de": "Anmelden", "en": "Log in"},
    "page_link_unknown": {
        "de": "Diesen Anmeldelink kenne ich nicht. Schreib /web im Chat für einen neuen.",
        "en": "I don't know this login link. Write /web in the chat for a new one.",
    },
    "page_link_used": {
        "de": "Dieser Anmeldelink wurde schon benutzt. Schreib /web im Chat für einen neuen.",
        "en": "This login link was used already. Write /web in the chat for a new one.",
    },
    "page_link_expired": {
        "de": "Dieser Anmeldelink ist abgelaufen (er gilt 10 Minuten). Schreib /web im Chat für einen neuen.",
        "en": "This login link has expired (it works for 10 minutes). Write /web in the chat for a new one.",
    },
    "page_logged_out": {
        "de": "Du bist nicht angemeldet. Schreib /web im Chat, dann schicke ich dir einen Link.",
        "en": "You are not logged in. Write /web in the chat and I'll send you a link.",
    },
    "page_not_found": {"de": "Das gibt es hier nicht.", "en": "There is nothing like that here."},
    "page_forbidden": {
        "de": "Das Formular war veraltet. Lade die Seite neu und versuch es noch einmal.",
        "en": "The form was out of date. Reload the page and try again.",
    },
    "page_bad_input": {"de": "Das verstehe ich nicht: {what}", "en": "I don't understand that: {what}"},
    "page_logout": {"de": "Abmelden", "en": "Log out"},
    "page_language": {"de": "English", "en": "Deutsch"},
    "page_own_memory": {"de": "Mein Gedächtnis", "en": "My memory"},
    "page_groups": {"de": "Gruppen", "en": "Groups"},
    "page_overview": {"de": "Überblick", "en": "Overview"},
    "page_saved": {"de": "Gespeichert.", "en": "Saved."},
    "page_when_format": {"de": "%d.%m.%Y %H:%M", "en": "%Y-%m-%d %H:%M"},
    "page_day_format": {"de": "%d.%m.%Y", "en": "%Y-%m-%d"},
    "page_count_messages": {"de": "Nachrichten", "en": "Messages"},
    "page_count_notes": {"de": "Notizen", "en": "Notes"},
    "page_count_people": {"de": "Menschen", "en": "People"},
    "page_count_rules": {"de": "Gelernte Regeln", "en": "Learned rules"},
    "page_count_reminders": {"de": "Erinnerungen", "en": "Reminders"},
    "page_count_diary": {"de": "Tagebucheinträge", "en": "Diary entries"},
    "page_count_thoughts": {"de": "Gedanken", "en": "Thoughts"},
    "page_count_topics": {"de": "Offene Themen", "en": "Open topics"},
    # Overview additions, diary and thoughts, conversation log, change log with undo, export and delete everything
    "page_learned_per_week": {"de": "Was ich pro Woche gelernt habe", "en": "What I learned per week"},
    "page_learned_per_week_caption": {
        "de": "Neue Notizen in jeder der letzten 12 Wochen (ab Montag).",
        "en": "New notes in each of the last 12 weeks (from Monday).",
    },
    "page_relationship": {"de": "Unsere Beziehung", "en": "Our relationship"},
    "page_relationship_changes": {"de": "Wie sie sich verändert hat", "en": "How it changed"},
    "page_nothing_yet": {"de": "Hier steht noch nichts.", "en": "Nothing here yet."},
    "page_newer": {"de": "← Neuere", "en": "← Newer"},
    "page_older": {"de": "Ältere →", "en": "Older →"},
    "page_diary": {"de": "Tagebuch und Gedanken", "en": "Diary and thoughts"},
    "page_diary_entries": {"de": "Tagebuch", "en": "Diary"},
    "page_thoughts": {"de": "Gedanken", "en": "Thoughts"},
    "page_log": {"de": "Gesprächsverlauf", "en": "Conversation log"},
    "page_log_words": {"de": "Wörter", "en": "Words"},
    "page_log_from": {"de": "Von", "en": "From"},
    "page_log_to": {"de": "Bis", "en": "To"},
    "page_log_search": {"de": "Suchen", "en": "Search"},
    "page_log_you": {"de": "Du", "en": "You"},
    "page_log_none": {"de": "Keine Nachrichten gefunden.", "en": "No messages found."},
    "page_log_incognito": {
        "de": "Inkognito von {start} bis {end}: {count} Nachrichten, nichts davon gespeichert.",
        "en": "Incognito from {start} to {end}: {count} messages, none of them kept.",
    },
    "page_changes": {"de": "Änderungen", "en": "Changes"},
    "page_processing_open": {"de": "kann rückgängig gemacht werden", "en": "can be undone"},
    "page_processing_undone": {"de": "rückgängig gemacht", "en": "undone"},
    "page_processing_final": {
        "de": "endgültig vergessen, nichts wiederherzustellen",
        "en": "forgotten for good, nothing to restore",
    },
    "page_processing_undo": {"de": "Rücknahme einer früheren Änderung", "en": "taking back an earlier change"},
    "page_undo": {"de": "Rückgängig machen", "en": "Undo"},
    "page_undo_confirm": {"de": "Diese Änderung zurücknehmen?", "en": "Take this change back?"},
    "page_undone": {"de": "Rückgängig gemacht.", "en": "Undone."},
    "page_undo_nothing": {
        "de": "Da gab es nichts mehr rückgängig zu machen.",
        "en": "There was nothing left to undo there.",
    },
    "page_undo_final": {
        "de": "Das habe ich endgültig vergessen, da gibt es nichts wiederherzustellen.",
        "en": "I forgot that for good, there is nothing to restore.",
    },
    "page_undo_later": {
        "de": "Eine spätere Änderung baut darauf auf. Nimm zuerst die spätere zurück.",
        "en": "A later change builds on it. Take the later one back first.",
    },
    "page_account": {"de": "Export und Löschen", "en": "Export and delete"},
    "page_export": {"de": "Alles herunterladen", "en": "Download everything"},
    "page_export_text": {
        "de": "Alles, was ich gespeichert habe, als JSON-Datei, genau wie /export im Chat.",
        "en": "Everything I stored, as a JSON file, exactly like /export in the chat.",
    },
    "page_export_download": {"de": "mnemo-export.json herunterladen", "en": "Download mnemo-export.json"},
    "page_delete_everything": {"de": "Alles löschen", "en": "Delete everything"},
    "page_delete_text": {
        "de": "Löscht alles, was ich gespeichert habe, endgültig, wie /deleteme im Chat.",
        "en": "Deletes everything I stored, for good, like /deleteme in the chat.",
    },
    "page_delete_next": {"de": "Weiter zum Löschen …", "en": "On to deleting …"},
    "page_delete_warning": {
        "de": "Danach ist alles weg: Nachrichten, Notizen, Menschen, Tagebuch, Erinnerungen. "
              "Das lässt sich nicht rückgängig machen.",
        "en": "Afterwards everything is gone: messages, notes, people, diary, reminders. This cannot be undone.",
    },
    "page_delete_word": {"de": "LÖSCHEN", "en": "DELETE"},
    "page_delete_type": {"de": "Tippe zur Bestätigung {word}:", "en": "Type {word} to confirm:"},
    "page_delete_button": {"de": "Endgültig alles löschen", "en": "Delete everything for good"},
    "page_cancel": {"de": "Abbrechen", "en": "Cancel"},
    "page_deleted": {
        "de": "Erledigt. Ich habe alles über dich gelöscht, und du bist abgemeldet.",
        "en": "Done. I deleted everything about you, and you are logged out.",
    },
    "page_group_deleted": {
        "de": "Erledigt. Das Gedächtnis der Gruppe ist gelöscht.",
        "en": "Done. The group's memory is deleted.",
    },
}
