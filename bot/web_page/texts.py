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
}
