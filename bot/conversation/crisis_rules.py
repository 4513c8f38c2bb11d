"""The crisis grammar's rules (`bot.conversation.crisis_grammar`): which parts, in which order and how close, make a
message that needs the help line, and the words that void a rule (data, German and English).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """Parts in this order, each at most `gap` words after the one before (`window`: all of them, in any order,
    within `gap` words); a negation between them breaks it, and a word of `void` anywhere in the text voids it."""

    name: str
    parts: tuple[str, ...]
    gap: int = 4
    window: bool = False
    no_not: bool = True
    void: tuple[str, ...] = ()
    subject: bool = False  # the first part must be the speaker's: 'ich'/'I' (or a sentence's start) right around it
    speaker: bool = False  # the message speaks of its writer somewhere ('ich', 'mich', 'I', 'me', 'hab', ...)


GAMES = ("beim", "aus versehen", "versehentlich", "jokingly", "im spaß", "zum spaß", "puns", "witze", "jokes",
          "out of the way", "spoil*", "spoiler", "spiel*", "game", "games", "schach", "chess", "karten", "cards",
          "tennis", "tischtennis", "mario",
          "kart", "fifa", "wette", "bet", "rennen", "race", "match", "runde", "round", "quiz", "wettkampf",
          "training", "sparring", "kampfsport", "boxen", "boxing", "judo", "karate", "kickbox*", "fußball",
          "football", "soccer", "volleyball", "basketball", "handball", "eishockey", "hockey", "vorschlag",
          "gegner", "opponent", "vorgeschlagen", "proposes", "suggests", "tor", "goal", "punkte", "points",
          "record", "rekord", "high score", "highscore", "bestzeit")
WATER = ("ins wasser", "in den see", "in den fluss", "ins meer", "in den pool", "ins becken", "into the water",
          "into the lake", "into the river", "into the sea", "into the pool", "baden", "schwimmen", "swim",
          "swimming", "freibad", "schwimmbad", "fallschirm*", "bungee*", "parachute", "skydiv*", "klippenspring*",
          "cliff diving", "trampolin*", "sprungturm", "zehner", "10er", "dreier", "diving", "tauchen", "ski",
          "schanze", "hürde*", "hurdle*", "seilspring*", "weitsprung", "hochsprung", "kletter*", "climb*",
          "parkour", "sommer", "summer")
BREAKUP = ("mit ihr", "mit ihm", "mit dir", "with her", "with him", "with you", "für heute", "for today",
            "arbeit", "work", "feierabend", "büro", "office", "typ", "guy", "der richtige", "the one", "beziehung",
            "relationship", "mit meinem freund",
            "mit meiner freundin", "serie", "rauchen", "smoking", "alkohol", "diät", "diet")
TRAVEL = ("urlaub", "vacation", "holiday", "reise", "trip", "umzug", "moving", "party", "feier", "firma",
           "kollegen", "colleagues", "abschiedsfeier", "farewell party", "flughafen", "airport", "ausland", "abroad",
           "praktikum", "semester", "bahnhof", "station", "rente", "retire*", "notar", "notary", "lawyer",
           "anwalt", "vorsorge", "versicherung", "insurance")
ACCIDENT = ("backofen", "blech", "tray", "pfanne", "pan", "kochtopf", "pot", "baustelle", "construction", "stiche",
            "stitches", "genäht", "wie behandelt", "how do i treat", "first aid", "erste hilfe", "finger", "daumen",
            "thumb", "ofen", "herd", "oven", "stove", "bügeleisen", "kochen", "cooking", "backen",
            "baking", "rasier*",
             "shaving", "by accident", "aus versehen", "versehentlich", "accidentally", "garten", "gardening",
             "werkstatt", "sunburn", "sonnenbrand", "tattoo*", "piercing", "arzt", "doctor", "operation",
             "surgery", "katze", "cat", "hund", "dog", "zwiebel*", "onion*", "gemüse", "vegetables",
             "messer beim", "beim schneiden", "dosenöffner", "can opener", "papercut", "papierschnitt")
JOKING = ("nochmal so", "wenn ich nochmal", "noch einmal so", "any longer", "noch länger", "meeting", "besprechung",
          "if i don't get", "if i dont get", "without coffee",
          "ohne kaffee", "wenn ich nicht bald", "if i don't eat", "not to be dramatic", "😂", "🤣", "😆", "lol", "lmao",
          "rofl", "haha", "hahaha", "xd", "wenn ich noch", "if i have to",
           "if i hear", "one more", "noch ein", "noch eine", "noch einmal", "one more time")
# After 'leben'/'live': a way of living, not life ('nicht mehr so leben', 'live in this city'); before 'world' it is
# life again ('in dieser Welt').
WAY_OF_LIVING = frozenset({"wie", "in", "with", "mit", "bei", "like", "im", "at", "near", "zusammen",
                            "together", "alone", "allein", "hier", "here", "there", "dort", "da"})
# 'die' is English only after these ('want to die'); else it is the German article ('vermisse die Stunden').
BEFORE_DIE = frozenset({"to", "wanna", "gonna", "just", "i", "i'd", "id", "would", "could", "should", "rather",
                         "and", "or", "simply", "will", "ll", "i'll", "ill", "shall", "might", "let", "me", "not"})
WORLD = frozenset({"welt", "world", "dieser", "this", "der", "the"})

HANG_HARMLESS = ("wäsche", "laundry", "boot", "boat", "zelt", "tent", "camping", "schaukel", "swing", "umzug",
                  "moving", "abschlepp*", "tow", "hund", "dog", "hose", "hosen", "jeans", "pants", "kleid",
                  "hängematte", "hammock", "boxsack", "punching bag", "lampe", "lamp", "bild", "picture",
                  "kletter*", "climb*", "turnen", "gym", "ringe", "rings", "während ich", "while i", "gassi",
                  "spazier*", "walk the dog", "walking the dog")
ANIMALS = ("katze", "kater", "cat", "hund", "dog", "welpe", "puppy", "kitten", "vogel", "bird", "möwe",
            "seagull", "ente", "duck", "gans", "goose", "pferd", "horse", "kuh", "cow", "ziege", "goat")

ERRANDS = ("hol", "hole", "holen", "post", "müll", "einkaufen", "grab", "mail", "get the", "kurz", "schnell",
           "mal eben", "zum", "zur", "bäcker", "laden", "keller", "briefkasten", "kiosk", "store",
           "shop", "quick", "real quick", "bakery", "einspring*", "ein", "dusche", "shower", "bett", "bed", "sofa",
           "couch", "call", "bus", "zug", "train", "conclusions", "schlüsse", "schatten", "shadow", "deep end")
MEASURES = ("aussicht", "view", "miete", "rent", "preis", "price", "kosten", "cost", "gehalt", "salary", "fieber",
            "fever", "rechnung", "bill", "welle*", "waves", "schnee", "snow", "wasserstand", "berg", "mountain")
PILLBOX = ("wie immer", "like always", "as usual", "wie jeden tag", "like every day", "für die woche", "for the week",
           "wochenbox", "pillbox", "pill box", "dosierer", "tablettenbox",
           "wie verschrieben", "as prescribed")
PRESENTS = ("geschenk*", "geburtstag*", "überraschung", "party", "hochzeit", "weihnacht*", "oster*", "present*",
            "gift*", "birthday", "surprise", "wedding", "christmas", "easter", "prüfung", "exam", "koffer", "suitcase")
HELP_HARMLESS = ("herd", "stove", "ofen", "oven", "pfanne", "pan", "toast", "angebrannt", "finger", "thumb", "fleck",
                 "flecken", "stain", "rezept", "recipe", "waschen", "wash", "film", "movie", "game", "spiel",
                 "kuchen", "cake", "pizza", "essen", "dinner", "nase", "nose", "nasenbluten", "nosebleed", "zahn",
                 "tooth", "periode", "period", "hausaufgabe*", "homework", "blutspende*", "blutdruck", "blood pressure",
                 "blutwert*", "blood test", "blutabnahme", "hemd", "shirt", "bluse", "blouse", "hose", "pants", "jeans",
                 "teppich", "carpet", "rug", "sofa", "couch", "bettwäsche", "sheets", "kleid", "dress", "kissen")

LIGATURE_HARMLESS = tuple(w for w in HANG_HARMLESS if w not in ("hund", "dog"))
GIVEAWAY_HARMLESS = TRAVEL + PRESENTS + ("dienstreise", "geschäftsreise", "business trip", "work trip", "verreis*",
                                         "going away", "weil ich", "because i'm", "because we", "weil wir",
                                         "solange ich",
                                         "while i'm", "zwillinge", "twins", "baby", "geburt", "birth", "born",
                                         "geregelt",
                                         "just in case", "für den fall", "vet", "tierarzt", "groomer", "hundefriseur",
                                         "fly", "flying", "fly out",
                                         "flight", "flug", "fliegen", "flieg*",
                                         "passwortmanager", "password manager", "konzert*", "concert", "ticket*",
                                         "miete", "rent", "urlaub", "holiday", "unser testament", "our will")

TRIVIAL = ("exam", "prüfung", "result", "ergebnis", "zeugnis", "grades", "noten", "scratched", "kratzer", "dent",
           "delle", "haircut", "friseur", "tattoo", "finds out", "find out", "erfährt",
           "rausfindet", "sees this", "das sieht")

RULES: tuple[Rule, ...] = (
    # wishing to die, or not to live
    Rule("wish_die", ("wish", "die"), gap=4, subject=True, void=JOKING + ("raus aus", "get out of", "out of town",
                                                                            "ans meer", "in den urlaub", "on holiday",
                                                                            "on vacation", "to the beach")),
    Rule("wish_not_live", ("wish", "not", "live"), gap=4, no_not=False, subject=True,
         void=("ohne", "without", "montag", "monday", "wecker", "alarm", "früh", "early", "arbeit", "work", "schule",
               "school") + JOKING),
    Rule("not_more_live", ("not", "more", "live"), gap=1, no_not=False, void=("ohne", "without")),
    Rule("wish_harm_self", ("wish", "selfobj", "harm"), gap=3),
    Rule("wish_harm_self_en", ("wish", "harm", "selfobj"), gap=3),
    # plans: a height and a fall, a vehicle to step in front of, a car into a wall
    Rule("fall_height", ("height", "fall"), gap=7, window=True, void=WATER + JOKING),
    Rule("under_traffic", ("under", "traffic", "throw"), gap=3),
    Rule("against_obstacle", ("against", "obstacle", "drive"), gap=3),
    Rule("drive_against", ("drive", "against", "obstacle"), gap=4),
    # means made ready
    Rule("poison_hoard", ("poison", "hoard"), gap=6, window=True, void=PILLBOX),
    Rule("poison_amount", ("amount", "poison", "swallow"), gap=6, window=True, void=ACCIDENT + PILLBOX),
    Rule("hang_test", ("hang", "anchor", "ready"), gap=8, window=True, void=HANG_HARMLESS),
    Rule("hang_neck", ("hang", "neck"), gap=4, window=True, void=("nose", "nase")),
    Rule("gun_ready", ("gun", "ready"), gap=5, window=True, void=GAMES),
    Rule("gas_closed", ("gasmeans", "closed"), gap=6, window=True, void=("needs a new", "mechanic", "werkstatt",
                                                                          "repair", "reparatur", "tüv", "neuen auspuff",
                                                                          "kochen", "cooking", "grillen", "bbq",
                                                                          "heizung", "heating", "ballon*")),
    # hurting oneself
    Rule("harm_body", ("harm", "body"), gap=5, window=True, void=ACCIDENT),
    Rule("blade_body", ("blade", "body"), gap=4, window=True, void=ACCIDENT),
    Rule("harm_intent", ("harm", "selfobj", "intent"), gap=6, window=True, void=ACCIDENT),
    # hurt by someone else
    Rule("actor_strikes_me", ("actor", "strike", "victim"), gap=3, void=GAMES),
    Rule("actor_me_struck", ("actor", "victim", "strike"), gap=4, void=GAMES),
    Rule("threat_kill_me", ("actor", "threat", "victim", "killverb"), gap=4, void=GAMES + JOKING + TRIVIAL),
    Rule("threat_kill_me_en", ("actor", "threat", "killverb", "victim"), gap=3, void=GAMES + JOKING + TRIVIAL),
    # goodbyes
    Rule("farewell_gone", ("farewell", "gone"), gap=6, window=True),
    Rule("giveaway_gone", ("giveaway", "gone"), gap=8, window=True, void=TRAVEL + JOKING + GAMES),
    Rule("giveaway_farewell", ("giveaway", "farewell"), gap=8, window=True, void=TRAVEL),
    # said in so many words, with the parts around them
    Rule("without_me_better", ("without_me", "better"), gap=6, window=True),
    Rule("nobody_notice_gone", ("nobody", "better", "without_me"), gap=8, window=True),
    Rule("burden_to_all", ("burden", "nobody"), gap=3, window=True, void=("kein", "keine", "no", "not", "nicht")),
    Rule("tired_of_living", ("tired", "live"), gap=2),
    Rule("no_point_living", ("nopoint", "live"), gap=6, window=True),
    Rule("at_the_tracks", ("tracks", "waiting"), gap=8, window=True),
    Rule("under_traffic_after", ("traffic", "throw", "under"), gap=4, window=True, void=WATER),
    Rule("sleep_never_wake", ("sleep", "not", "live"), gap=3, no_not=False, void=JOKING),
    Rule("death_relief", ("death", "relief"), gap=5, window=True),
    Rule("disappear_forever", ("disappear", "forever"), gap=5, window=True),
    Rule("not_wish_live_more", ("not", "wish", "live", "more"), gap=3, no_not=False),
    Rule("relapse_harm", ("relapse", "harm"), gap=8, window=True),
    Rule("hidden_cuts", ("cuts", "hiding"), gap=5, window=True, void=ACCIDENT),
    Rule("urge_to_harm", ("urge", "harm"), gap=4, window=True),
    Rule("harm_again", ("harm", "intent"), gap=2, window=True, void=ACCIDENT),
    Rule("razor_laid_out", ("razor", "hoard"), gap=5, window=True),
    Rule("strike_actor_me", ("strike", "actor", "victim"), gap=2, void=GAMES),
    Rule("actor_brings_me_um", ("actor", "killverb", "victim"), gap=3, void=("noch", "still", "mit seinen",
                                                                              "mit ihren") + JOKING + GAMES + TRIVIAL),
    Rule("hang_bought", ("hang", "ready"), gap=5, window=True, void=WATER + HANG_HARMLESS),
    Rule("height_no_return", ("height", "no_return"), gap=10, window=True, void=WATER + JOKING),
    Rule("last_words_over", ("last_words", "its_over"), gap=12, window=True, void=JOKING),
    Rule("silent_not_fault", ("if_silent", "not_fault"), gap=12, window=True),
    Rule("cut_myself", ("selfobj", "cutting"), gap=3, subject=True, void=ACCIDENT + ("haare", "hair", "nägel",
                                                                                     "nails", "pony", "bangs")),
    Rule("bleeding_heavily", ("bleed", "heavy"), gap=4, window=True, void=("nase", "nose", "zahn", "tooth",
                                                                            "periode", "period", "tage", "pflaster",
                                                                            "plaster", "band aid", "bandaid",
                                                                            "mein sohn", "meine tochter", "my son",
                                                                            "my daughter", "winzig", "tiny")),
    Rule("smells_of_gas", ("smell", "gasmeans"), gap=4, window=True, void=("herd", "stove", "grill", "bbq")),
    Rule("breaking_in", ("breaks", "at_me"), gap=4, window=True),
    Rule("better_to_die", ("better", "die"), gap=4, void=JOKING),
    Rule("thought_of_dying", ("thought", "die"), gap=4, void=JOKING + ("oma", "opa", "grandma", "grandpa")),
    Rule("height_enough", ("height", "resolve"), gap=10, window=True, void=MEASURES),
    Rule("throw_under_traffic", ("throw", "under", "traffic"), gap=3),
    Rule("onto_the_tracks", ("throw", "tracks"), gap=4),
    Rule("into_the_water", ("water_in", "no_return"), gap=8, window=True),
    Rule("hang_myself", ("hangverb", "selfobj"), gap=1, void=("bild", "picture", "wäsche", "laundry", "out")),
    Rule("means_resolve", ("means", "resolve"), gap=12, window=True, void=JOKING + PILLBOX),
    Rule("means_hoard", ("means", "hoard"), gap=6, window=True, void=PILLBOX),
    Rule("razor_got", ("razor", "ready"), gap=5, window=True,
         void=("rasierer", "rasieren", "rasiert", "rasierschaum", "shave", "shaving", "beine", "new blade",
               "for my razor", "neue klinge", "bart", "beard")),
    Rule("gun_taken", ("gun", "ready"), gap=8, window=True, void=GAMES),
    Rule("parting_forever", ("parting", "everyone"), gap=10, window=True, void=TRAVEL),
    Rule("parting_resolve", ("parting", "resolve"), gap=12, window=True, void=TRAVEL),
    Rule("giveaway_resolve", ("giveaway", "resolve"), gap=12, window=True, void=TRAVEL),
    Rule("end_it_now", ("end_it", "time"), gap=4, window=True, void=BREAKUP),
    Rule("weapon_menace", ("weapon", "menace"), gap=8, window=True, void=GAMES + JOKING),
    Rule("standing_with_rope", ("standing_on", "hang"), gap=8, window=True, void=HANG_HARMLESS),
    Rule("cut_myself_en", ("cutting", "selfobj"), gap=2, subject=True, void=ACCIDENT + ("hair", "nails")),
)

WEAPON_HARMLESS = ("gekauft", "bought", "küche", "kitchen", "kochen", "cooking", "schnitz*", "carving", "camping",
                   "angeln", "fishing", "jagd", "hunting", "sammlung", "collection", "waffenschein", "license",
                   "schützenverein", "range", "schießstand", "film", "movie", "spiel", "game", "kostüm", "costume")
VIEWS = ("foto*", "photo*", "reparier*", "fix*", "repair*", "dachrinne", "gutter", "antenne", "solar*", "aussicht",
         "view", "sunset", "sonnenuntergang", "party", "bar", "feuerwerk", "fireworks", "stau", "traffic", "konzert",
         "concert", "grill*", "bbq", "sonne", "sun", "sterne", "stars", "kaffee", "coffee", "bier", "beer")

DISTANCE_WORDS = ("film", "movie", "buch", "book", "serie", "show")

# Issue 51, second round: frames that carry over to places, means and verbs the parts do not list.
MORE_RULES: tuple[Rule, ...] = (
    Rule("jump_down", ("fall", "down"), gap=2, speaker=True, void=WATER + JOKING + GAMES + ERRANDS + ANIMALS),
    Rule("jump_down_word", ("jumpdown",), speaker=True, void=WATER + JOKING + GAMES + ERRANDS + ANIMALS),
    Rule("from_place_fall", ("from", "fall"), gap=4, speaker=True, void=WATER + JOKING + GAMES + ERRANDS + ANIMALS),
    Rule("standing_then_fall", ("standing_on", "fall"), gap=12, window=True, void=WATER + JOKING + GAMES + ERRANDS),
    Rule("up_no_return", ("up", "no_return"), gap=10, window=True, void=WATER + JOKING + GAMES),
    Rule("how_high_enough", ("how_high", "resolve"), gap=12, window=True, void=WATER + JOKING + GAMES + MEASURES),
    Rule("scouted_then_fall", ("look_at", "fall"), gap=10, window=True, speaker=True,
         void=WATER + JOKING + GAMES + ERRANDS),
    Rule("no_point_resolved", ("nopoint", "no_return"), gap=14, window=True, void=BREAKUP + TRAVEL),
    Rule("wish_end_it", ("wish", "wish_end"), gap=4, subject=True, void=BREAKUP + JOKING),
    Rule("ligature_holds_me", ("ligature", "holds_me"), gap=10, window=True, void=LIGATURE_HARMLESS),
    Rule("ligature_tested", ("ligature", "anchor", "tested"), gap=10, window=True, void=LIGATURE_HARMLESS),
    Rule("tested_holds_me", ("tested", "holds_me", "ligature"), gap=10, window=True, void=HANG_HARMLESS + GAMES),
    Rule("ligature_tied_resolve", ("ligature", "resolve"), gap=12, window=True, void=LIGATURE_HARMLESS + JOKING),
    Rule("giveaway_alone", ("giveaway_strong",), speaker=True, void=GIVEAWAY_HARMLESS),
    Rule("easier_to_end_it", ("better", "wish_end"), gap=4, void=BREAKUP + JOKING),
    Rule("dying_decided", ("die", "no_return"), gap=12, window=True, void=JOKING + GAMES),
    Rule("hoard_resolve", ("stash", "resolve"), gap=12, window=True, void=PRESENTS + TRAVEL + JOKING + PILLBOX),
    Rule("means_not_for", ("poison", "not_for"), gap=5, window=True),
    Rule("plea_danger", ("plea", "dangerword"), gap=12, window=True,
         void=HELP_HARMLESS + JOKING + GAMES + PRESENTS + ("choose", "pick", "buy", "kaufen", "aussuchen", "set")),
    Rule("weapon_near", ("actor", "weapon", "menace"), gap=8, window=True, void=GAMES + JOKING + ACCIDENT),
    Rule("pet_for_good", ("pet", "for_good"), gap=8, window=True, speaker=True, void=("tierheim", "shelter")),
    Rule("giveaway_over", ("giveaway", "its_over"), gap=14, window=True, void=TRAVEL + JOKING),
    Rule("silent_not_fault_dialect", ("if_silent", "not", "fault"), gap=14, window=True, no_not=False),
    Rule("how_many_it_takes", ("how_many", "poison", "it_takes"), gap=10, window=True, void=JOKING),
    Rule("actor_weapon_fear", ("actor", "weapon", "fear"), gap=14, window=True,
         void=WEAPON_HARMLESS + GAMES + JOKING + PRESENTS + ("choose", "pick", "aussuchen", "set")),
    Rule("kills_actor_me", ("killverb", "actor", "victim"), gap=2, void=("noch", "still", "zu spät", "too late")
         + JOKING + GAMES + TRIVIAL),
    Rule("struck_near", ("strike", "victim", "actor"), gap=8, window=True, void=GAMES + JOKING + ACCIDENT),
    Rule("harm_on_purpose", ("harm", "purpose", "limb"), gap=10, window=True, speaker=True, void=GAMES + JOKING),
    Rule("standing_up_there", ("standing_on", "height", "edge"), gap=14, window=True, speaker=True,
         void=WATER + GAMES + JOKING + VIEWS),
    Rule("join_the_dead", ("death_of_other", "wish", "join"), gap=20, window=True,
         void=("fahren", "fahr", "drive", "visit", "besuchen", "anrufen", "call", "beerdigung", "funeral", "grab",
               "grave", "thoughts", "gedanken", "memories", "erinnerung*", "more often",
               "öfter") + GAMES + DISTANCE_WORDS),
    Rule("tired_of_self", ("tired", "of_self"), gap=3, void=JOKING),
    Rule("method_research", ("research", "method"), gap=10, window=True, speaker=True,
         void=JOKING + GAMES + ("caffeine", "koffein", "coffee", "kaffee", "turns out", "darf", "am tag", "per day",
                                "pro tag", "can i take", "kann ich nehmen", "headache", "kopfschmerz*", "dosierung",
                                "dosage", "fever", "fieber", "kind", "kid", "baby")),
    Rule("overdose_symptoms", ("amount", "swallow", "substance", "symptom"), gap=14, window=True, speaker=True),
    Rule("sorry_and_love", ("sorry_all", "love"), gap=12, window=True,
         void=("yesterday", "gestern", "earlier", "vorhin", "last night", "letzte nacht", "heute morgen",
               "this morning")),
    Rule("took_it_all", ("took_all", "substance"), gap=6, window=True, speaker=True, void=JOKING + PILLBOX),
    Rule("took_all_symptoms", ("took_all", "substance", "symptom"), gap=14, window=True, speaker=True,
         void=JOKING + GAMES + PILLBOX),
    Rule("drank_toxic", ("swallow", "toxic"), gap=4, window=True, speaker=True),
    Rule("toxic_got", ("toxic", "ready"), gap=8, window=True, speaker=True,
         void=("garten", "garden", "unkraut", "weeds", "ratten", "rats", "mäuse", "mice", "putz*", "cleaning", "clean",
               "labor", "lab report", "experiment")),
    Rule("not_want_wake", ("not", "wish", "live"), gap=3, no_not=False, speaker=True,
         void=JOKING + ("früh", "early", "so early", "alarm", "wecker", "monday", "montag", "work", "arbeit",
                        "school", "schule", "hangover", "kater")),
    Rule("hit_by_and_fine", ("hit_by", "okay_with"), gap=14, window=True, speaker=True, void=JOKING),
    Rule("harm_self_body", ("selfobj", "body", "harm"), gap=6, window=True, subject=True, void=ACCIDENT),
)

ALL_RULES = RULES + MORE_RULES
