"""The help text in a crisis, per country, in German and English: who answers (`help_at_XX`) and how the help text
around it reads for the person themselves (`crisis_help`) and for someone they know (`crisis_help_other`). The
numbers and their public sources: docs/user-guide.md, Safety; the code that picks them: bot/conversation/help_lines.py.
"""
from __future__ import annotations

HELP_TEXTS: dict[str, dict[str, str]] = {
    "crisis_help": {
        "de": "Wenn es dir gerade sehr schlecht geht: Du bist nicht allein. {services} In akuter Gefahr ruf bitte "
              "sofort {emergency} an.",
        "en": "If you are in a very bad place right now: you are not alone. {services} If you are in acute danger, "
              "please call {emergency} now.",
    },
    "crisis_help_other": {
        "de": "Wenn jemand, den du kennst, in Gefahr ist: Du musst das nicht allein tragen. {services} Dort hilft "
              "man auch Angehörigen und Freunden. Ist das Leben dieses Menschen jetzt in Gefahr, ruf bitte sofort "
              "{emergency} an.",
        "en": "If someone you know is in danger: you don't have to carry this alone. {services} They help family "
              "and friends too. If that person's life is in danger now, please call {emergency} right away.",
    },
    "help_or": {"de": "oder", "en": "or"},
    "help_emergency_local": {"de": "die Notrufnummer deines Landes (in Europa 112)",
                             "en": "your country's emergency number (112 in Europe)"},
    "help_at_DE": {
        "de": "Die TelefonSeelsorge ist rund um die Uhr kostenlos erreichbar unter 0800 111 0 111, 0800 111 0 222 "
              "oder 116 123.",
        "en": "In Germany the TelefonSeelsorge answers day and night, free, at 0800 111 0 111, 0800 111 0 222 or "
              "116 123.",
    },
    "help_at_AT": {
        "de": "Die Telefonseelsorge erreichst du rund um die Uhr kostenlos unter 142; Kinder und Jugendliche auch "
              "Rat auf Draht unter 147.",
        "en": "In Austria the Telefonseelsorge answers day and night, free, at 142; children and young people can "
              "also call Rat auf Draht at 147.",
    },
    "help_at_CH": {
        "de": "Die Dargebotene Hand erreichst du rund um die Uhr unter 143; Kinder und Jugendliche auch Pro "
              "Juventute unter 147.",
        "en": "In Switzerland Die Dargebotene Hand answers day and night at 143; children and young people can also "
              "call Pro Juventute at 147.",
    },
    "help_at_GB": {
        "de": "Die Samaritans erreichst du rund um die Uhr kostenlos unter 116 123; per SMS hilft Shout: schreib "
              "SHOUT an 85258.",
        "en": "Samaritans answer day and night, free, on 116 123; or text SHOUT to 85258 (Shout).",
    },
    "help_at_IE": {
        "de": "Die Samaritans erreichst du rund um die Uhr kostenlos unter 116 123, Pieta unter 1800 247 247; per "
              "SMS rund um die Uhr: schreib an 50808.",
        "en": "Samaritans answer day and night, free, on 116 123, Pieta on 1800 247 247; or text 50808, day and "
              "night.",
    },
    "help_at_US": {
        "de": "Ruf oder schreib rund um die Uhr die 988 an (988 Suicide & Crisis Lifeline).",
        "en": "Call or text 988 (988 Suicide & Crisis Lifeline), day and night.",
    },
    "help_at_CA": {
        "de": "Ruf oder schreib rund um die Uhr die 988 an (9-8-8 Suicide Crisis Helpline).",
        "en": "Call or text 988 (9-8-8 Suicide Crisis Helpline), day and night.",
    },
    "help_at_AU": {
        "de": "Lifeline erreichst du rund um die Uhr unter 13 11 14.",
        "en": "Lifeline answers day and night on 13 11 14.",
    },
    "help_at_NL": {
        "de": "113 Zelfmoordpreventie erreichst du rund um die Uhr kostenlos unter 113 oder 0800-0113.",
        "en": "113 Zelfmoordpreventie answers day and night, free, at 113 or 0800-0113.",
    },
    "help_at_FR": {
        "de": "Die nationale Nummer gegen Suizid, 3114, ist rund um die Uhr kostenlos erreichbar.",
        "en": "The national suicide prevention line 3114 answers day and night, free.",
    },
    "help_at_world": {
        "de": "Eine Krisenhilfe in deinem Land findest du auf findahelpline.com.",
        "en": "You can find a crisis line in your country at findahelpline.com.",
    },
}
