"""The profile keys the extraction writes (in English, so they stay stable), as a person reads them."""
from __future__ import annotations

PROFILE_KEYS: dict[str, dict[str, str]] = {
    "name": {"de": "Name", "en": "Name"},
    "nickname": {"de": "Spitzname", "en": "Nickname"},
    "age": {"de": "Alter", "en": "Age"},
    "birthday": {"de": "Geburtstag", "en": "Birthday"},
    "gender": {"de": "Geschlecht", "en": "Gender"},
    "pronouns": {"de": "Pronomen", "en": "Pronouns"},
    "work": {"de": "Arbeit", "en": "Work"},
    "job": {"de": "Beruf", "en": "Job"},
    "occupation": {"de": "Beruf", "en": "Occupation"},
    "profession": {"de": "Beruf", "en": "Profession"},
    "employer": {"de": "Arbeitgeber", "en": "Employer"},
    "education": {"de": "Ausbildung", "en": "Education"},
    "studies": {"de": "Studium", "en": "Studies"},
    "school": {"de": "Schule", "en": "School"},
    "home": {"de": "Zuhause", "en": "Home"},
    "location": {"de": "Wohnort", "en": "Location"},
    "city": {"de": "Stadt", "en": "City"},
    "hometown": {"de": "Heimatort", "en": "Hometown"},
    "residence": {"de": "Wohnort", "en": "Residence"},
    "nationality": {"de": "Staatsangehörigkeit", "en": "Nationality"},
    "languages": {"de": "Sprachen", "en": "Languages"},
    "language": {"de": "Sprache", "en": "Language"},
    "family": {"de": "Familie", "en": "Family"},
    "partner": {"de": "Partner", "en": "Partner"},
    "relationship": {"de": "Beziehung", "en": "Relationship"},
    "relationship_status": {"de": "Beziehungsstatus", "en": "Relationship status"},
    "children": {"de": "Kinder", "en": "Children"},
    "kids": {"de": "Kinder", "en": "Kids"},
    "pet": {"de": "Haustier", "en": "Pet"},
    "pets": {"de": "Haustiere", "en": "Pets"},
    "interests": {"de": "Interessen", "en": "Interests"},
    "hobby": {"de": "Hobby", "en": "Hobby"},
    "hobbies": {"de": "Hobbys", "en": "Hobbies"},
    "likes": {"de": "Mag", "en": "Likes"},
    "dislikes": {"de": "Mag nicht", "en": "Dislikes"},
    "food": {"de": "Essen", "en": "Food"},
    "diet": {"de": "Ernährung", "en": "Diet"},
    "drink": {"de": "Getränk", "en": "Drink"},
    "music": {"de": "Musik", "en": "Music"},
    "sport": {"de": "Sport", "en": "Sport"},
    "sports": {"de": "Sport", "en": "Sports"},
    "health": {"de": "Gesundheit", "en": "Health"},
    "style": {"de": "Stil", "en": "Style"},
    "communication": {"de": "Kommunikation", "en": "Communication"},
    "communication_style": {"de": "Gesprächsstil", "en": "Communication style"},
    "personality": {"de": "Persönlichkeit", "en": "Personality"},
    "fears": {"de": "Ängste", "en": "Fears"},
    "fear": {"de": "Angst", "en": "Fear"},
    "needs": {"de": "Bedürfnisse", "en": "Needs"},
    "values": {"de": "Werte", "en": "Values"},
    "goals": {"de": "Ziele", "en": "Goals"},
    "dreams": {"de": "Träume", "en": "Dreams"},
    "beliefs": {"de": "Überzeugungen", "en": "Beliefs"},
    "religion": {"de": "Religion", "en": "Religion"},
    "life_events": {"de": "Lebensereignisse", "en": "Life events"},
}


PROFILE_CATEGORIES: dict[str, dict[str, str]] = {
    "facts": {"de": "Fakten", "en": "Facts"},
    "emotional": {"de": "Gefühle und Bedürfnisse", "en": "Feelings and needs"},
    "life_events": {"de": "Lebensereignisse", "en": "Life events"},
}


def profile_category(category: str, lang: str) -> str:
    """A profile entry's category as a person reads it ('facts' -> 'Fakten'); an unknown one as written."""
    known = PROFILE_CATEGORIES.get(category)
    return known.get(lang, known["de"]) if known is not None else category.replace("_", " ")


def profile_key(key: str, lang: str) -> str:
    """A profile key as a person reads it ('work' -> 'Arbeit'); a key without a translation as written."""
    known = PROFILE_KEYS.get(key.strip().lower().replace(" ", "_").replace("-", "_"))
    if known is not None:
        return known.get(lang, known["de"])
    return key.replace("_", " ")
