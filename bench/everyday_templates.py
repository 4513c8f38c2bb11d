"""Template families of everyday chat messages in German and English (bench/everyday_set.py fills their slots).

A family is a category and a few patterns whose `{slot}`s are filled from word lists; a slot named with a trailing
digit (`{food2}`) takes its words from the list without it. bench/everyday_set.py caps how many messages a family
and each of its patterns may give, so no family floods the set.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """Patterns of one kind of message in one language, with the words for their slots."""

    lang: str
    name: str
    category: str
    patterns: tuple[str, ...]
    slots: dict[str, tuple[str, ...]]


def words(block: str) -> tuple[str, ...]:
    """The non-empty lines of a block, stripped."""
    return tuple(line.strip() for line in block.splitlines() if line.strip())


NUMBERS = tuple(str(n) for n in range(0, 61)) + ("70", "80", "99", "100", "120", "250", "500", "1000")
SMALL = tuple(str(n) for n in range(1, 13))
HOURS = tuple(str(n) for n in range(5, 24))
TIMES = tuple(f"{h}:{m}" for h in range(6, 24) for m in ("00", "05", "15", "20", "30", "40", "45", "50"))
TIMES_DOT = tuple(t.replace(":", ".") for t in TIMES)
DAYS = tuple(str(n) for n in range(1, 32))
MONTHS = tuple(str(n) for n in range(1, 13))
SUFFIXES = {1: "st", 2: "nd", 3: "rd"}
ORDINALS = tuple(f"{n}{'th' if 10 < n < 14 else SUFFIXES.get(n % 10, 'th')}" for n in range(1, 32))
YEARS = ("2023", "2024", "2025", "2026")
PERCENT = ("5", "10", "12", "20", "25", "30", "33", "40", "50", "60", "70", "75", "80", "90", "95", "99", "100", "110")
PRICES_DE = tuple(f"{e},{c}" for e in (1, 2, 3, 4, 5, 7, 9, 12, 15, 19, 24, 39, 49, 89, 120)
                  for c in ("00", "49", "50", "90", "95", "99"))
PRICES_EN = tuple(f"{d}.{c}" for d in (1, 2, 3, 4, 5, 7, 9, 12, 15, 19, 24, 39, 49, 89, 120)
                  for c in ("00", "49", "50", "90", "95", "99"))
PHONES = ("0171 2345678", "0160 98 76 54 3", "0176/55512345", "089 1234567", "+49 151 23456789", "030 9876543",
          "0152 11223344", "0711-445566", "0157 876 5432", "0221 555 0199")
PHONES_EN = ("555-0142", "(555) 201-7788", "07700 900123", "+44 7700 900456", "0412 345 678", "212-555-0199",
             "020 7946 0321", "(312) 555-0107", "+1 415 555 0123", "0161 496 0000")
CODES = ("4821", "1234", "0815", "7391", "2580", "9044", "3317", "6620", "5150", "8008", "1987", "4455")
EMOJI = words("""
😂
🤣
😅
😊
🙂
😍
🥰
😘
😎
🤔
🙄
😴
😭
🥲
😬
😳
🙈
🤷
🤦
👍
👌
🙏
💪
👏
🙌
❤️
💙
🔥
✨
🎉
☀️
🌧️
☕
🍕
🍺
🐶
🐱
💀
😤
🥳
🤗
😇
🫶
😮‍💨
""")
EMOJI_MIX = EMOJI + ("😂😂", "🙈🙈", "❤️❤️❤️", "🥳🎉", "👍👍", "😭😭", "🔥🔥🔥", "😅🙏")

DE_NAMES = words("""
Anna
Lena
Jonas
Tim
Mia
Lukas
Sophie
Paul
Marie
Felix
Hannah
Ben
Emma
Leon
Sarah
Jan
Laura
Max
Julia
Niklas
Sabine
Thomas
Petra
Andreas
Gisela
Klaus
Aylin
Mehmet
Olga
Tobi
""")
EN_NAMES = words("""
Emma
Liam
Olivia
Noah
Ava
Jack
Sophie
Harry
Mia
Oscar
Chloe
Ethan
Grace
James
Priya
Carlos
Aisha
Tom
Megan
Dan
Linda
Mike
Karen
Steve
Zoe
Ryan
Chen
Fatima
Lucy
Ben
""")
DE_CITIES = words("""
Hamburg
Berlin
München
Köln
Leipzig
Dresden
Stuttgart
Frankfurt
Nürnberg
Bremen
Hannover
Freiburg
Münster
Rostock
Wien
Zürich
Kiel
Mainz
Regensburg
Sylt
""")
EN_CITIES = words("""
London
Manchester
Leeds
Brighton
Edinburgh
Dublin
New York
Chicago
Austin
Seattle
Denver
Boston
Portland
Toronto
Sydney
Melbourne
Cardiff
Bristol
Miami
Vegas
""")
DE_WEEKDAYS = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")
EN_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
DE_MONTHS = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
             "November", "Dezember")
EN_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December")

DE = (
    Family("de", "burst", "number", (
        "schnell {n}", "{n}", "noch {n}", "{n}!", "{n}?", "nummer {n}", "{n} bitte", "und {n}", "jetzt {n}",
        "{n} {n2}", "ok {n}", "{n}!!", "also {n}", "eher {n}", "sagen wir {n}", "{n} oder {n2}",
    ), {"n": NUMBERS}),
    Family("de", "clock", "number", (
        "{t}", "um {t}?", "{t} passt", "bin um {h} da", "treffen {t}?", "{h} uhr?", "schaff erst {t}", "zug um {t}",
        "ab {t} hab ich zeit", "wecker auf {td} gestellt", "{h}?", "lieber {t}", "es ist schon {t} 😱",
        "{h} uhr geht", "bin {n} min zu spät sorry", "kurz nach {h}",
    ), {"t": TIMES, "td": TIMES_DOT, "h": HOURS, "n": ("5", "10", "15", "20", "30")}),
    Family("de", "dates", "number", (
        "am {d}.{m}.", "{d}.{m}.{y}", "{d}. {mon}", "geburtstag am {d}. {mon}", "bis {wd} den {d}.",
        "termin {d}.{m}. um {t}", "urlaub vom {d}. bis {d2}. {mon}", "{wd}, {d}.{m}.", "ab {d}.{m}. hab ich frei",
        "der {d}. passt mir", "{d}.{m}.?",
    ), {"d": DAYS, "m": MONTHS, "y": YEARS, "mon": DE_MONTHS, "wd": DE_WEEKDAYS, "t": TIMES}),
    Family("de", "amounts", "number", (
        "{p}€", "hat {p} € gekostet", "{s}x", "{s} von {s2}", "{pc}%", "akku {pc}%", "zu {pc}% sicher",
        "{n} euro", "kostet {p} 😳", "{s} stück bitte", "{s} kilo abgenommen", "{s} km gelaufen", "{n} grad draußen",
        "{s} mal {s2}", "{pc} prozent rabatt", "war {p}, ein schnäppchen", "{n} likes lol", "schon {s}x gesagt",
    ), {"p": PRICES_DE, "s": SMALL, "n": NUMBERS, "pc": PERCENT}),
    Family("de", "digits", "number", (
        "meine neue nummer: {ph}", "{ph}", "plz {plz}", "code ist {c}", "kundennummer {k}", "tisch {s}",
        "gleis {s}", "zimmer {r}", "ruf mich an {ph}", "die nummer vom klempner: {ph}", "haus nr. {s}",
        "sendungsnummer {k}", "bus {bus}", "linie {s}",
    ), {"ph": PHONES, "plz": ("80331", "10115", "20095", "50667", "70173", "04109", "01067", "90402"),
        "c": CODES, "k": ("4711023", "88123456", "0034456781", "556677", "10293847"), "s": SMALL,
        "r": ("12", "104", "213", "305", "0.17"), "bus": ("42", "100", "7", "M41", "N5", "X11")}),
    Family("de", "greetings", "greeting", (
        "{g}", "{g} {e}", "{g}, ich bin {name}", "{g} ich bin neu hier", "{g}, wie funktioniert das?",
        "{g}! wie gehts dir?", "{g} {name} hier", "{g}, bin neu", "{g} bot", "{g} 👋", "{g}, was kannst du so?",
        "{g} wie geht das hier", "{g}, ich heiße {name}", "{g} erstmal",
    ), {"g": ("hallo", "hi", "hey", "moin", "servus", "guten morgen", "guten abend", "huhu", "na", "hallöchen",
              "tach", "hey du", "hallo zusammen", "grüß dich", "moinsen", "halli hallo"),
        "name": DE_NAMES, "e": EMOJI}),
    Family("de", "replies", "short", (
        "{y} {e}", "{y}", "{y} {t}", "{n}", "{n} {t}", "{y}{p}", "{n}{p}", "{w}", "{w} {e}", "{y} {y2}",
    ), {"y": ("ja", "jo", "jep", "okay", "ok", "passt", "gerne", "klar", "sicher", "genau", "jawoll", "auf jeden",
              "gut", "alles klar", "mach ich", "jaaa", "joa"),
        "n": ("nein", "nö", "nee", "ne", "eher nicht", "lieber nicht", "nope", "nicht wirklich", "noch nicht"),
        "t": ("danke", "dankeschön", "merci", "danke dir", "thx"), "w": ("mir egal", "weiß nicht", "keine ahnung",
              "mal sehen", "vielleicht", "egal", "hmm", "naja", "mhm", "schon okay", "kein ding", "macht nix"),
        "p": ("!", ".", "!!", " :)", " :D", "?"), "e": EMOJI}),
    Family("de", "emojimix", "emoji", (
        "{e}", "{e}{e2}", "{e} {e2}", "{e}{e2}{e3}", "{w} {e}", "{e} {w}", "{w}{e}",
    ), {"e": EMOJI_MIX, "w": ("haha", "jaa", "danke", "oh nein", "süß", "wow", "geil", "lecker", "gute nacht",
                              "hahaha", "omg", "krass", "ohje", "juhu", "endlich", "nice")}),
    Family("de", "plans", "plans", (
        "morgen gehts nach {city}", "{wd} bin ich in {city}", "bin dann mal weg, {act}", "gehe jetzt {act}",
        "wir fahren {far} nach {city}", "{when} {act}", "gleich {act}", "bin weg, {act}", "muss jetzt {act}",
        "{far} nach {city} 🚗", "fliege {wd} nach {city}", "heute abend {act}",
    ), {"city": DE_CITIES, "wd": DE_WEEKDAYS, "far": ("nächste woche", "am wochenende", "im sommer", "an ostern",
        "in den ferien", "über weihnachten", "im herbst"),
        "when": ("morgen", "übermorgen", "nachher", "später", "am freitag", "gleich nach der arbeit"),
        "act": ("einkaufen", "joggen", "zum sport", "duschen", "kochen", "schlafen", "mit dem hund raus",
                "zum bäcker", "ins kino", "arbeiten", "zum zahnarzt", "wäsche machen", "zu meinen eltern",
                "fußball gucken", "mit freunden essen", "spazieren", "in die sauna", "aufräumen", "zocken")}),
    Family("de", "reminders", "request", (
        "erinner mich {when} an {task}", "kannst du mich {when} an {task} erinnern?", "{when} {task}, erinner mich",
        "bitte {when} an {task} erinnern", "merk dir: {name} {fact}", "merk dir bitte, {name} {fact}",
        "{name} {fact}, merk dir das",
        "nicht vergessen: {task}", "erinnere mich um {t} an {task}",
    ), {"when": ("morgen", "morgen früh", "heute abend", "am montag", "in einer stunde", "nachher", "übermorgen",
                 "am wochenende", "freitag"),
        "task": ("den müll", "die wäsche", "den zahnarzt", "mamas geburtstag", "die steuererklärung", "das paket",
                 "die blumen gießen", "die miete", "den elternabend", "meine tabletten", "das altglas",
                 "den reifenwechsel", "die bücherei", "das geschenk für papa", "den friseurtermin"),
        "name": DE_NAMES, "t": TIMES,
        "fact": ("hat am 3. mai geburtstag", "mag keinen fisch", "isst kein fleisch", "wohnt jetzt in köln",
                 "hat einen neuen job", "ist allergisch gegen katzen", "kriegt ein baby", "spielt gitarre",
                 "trinkt nur tee", "hat den schlüssel")}),
    Family("de", "cooking", "cooking", (
        "heute gibts {food}", "hab {food} gekocht", "{food} oder {food2}?", "lust auf {food}",
        "was kann ich mit {ing} und {ing2} machen?", "{food} 😋", "mach grad {food}", "es gibt {food}, yay",
        "bestell mir {food}", "wie lange kommt {food} in den ofen?",
    ), {"food": ("pizza", "nudeln", "lasagne", "curry", "suppe", "salat", "döner", "sushi", "pfannkuchen",
                 "kartoffelsuppe", "spaghetti bolognese", "chili", "burger", "auflauf", "risotto", "käsespätzle",
                 "bratkartoffeln", "falafel", "ramen", "gulasch"),
        "ing": ("reis", "eiern", "zucchini", "kartoffeln", "hack", "tomaten", "feta", "spinat", "linsen",
                "paprika", "hähnchen", "tofu")}),
    Family("de", "tired", "sad", (
        "bin {so} {tired}", "{day} war {bad}", "{tired} {e}", "heute {so} {tired}", "{day} war echt {bad}",
        "bin einfach {tired}", "{so} {tired} heute",
    ), {"so": ("so", "total", "echt", "richtig", "voll", "mega", "ziemlich"),
        "tired": ("müde", "kaputt", "platt", "erledigt", "fertig", "durch", "k.o.", "schlapp", "gestresst",
                  "genervt", "durch den wind", "lustlos", "traurig"),
        "day": ("heute", "der tag", "die woche", "montag", "die schicht", "das wochenende"),
        "bad": ("anstrengend", "mies", "scheiße", "zu lang", "blöd", "nicht so toll", "chaotisch", "zäh",
                "stressig"), "e": ("😴", "🥱", "😩", "😮‍💨", "🥲", "😫")}),
    Family("de", "hyperbole", "idiom", (
        "ich sterbe vor {x}", "{thing} bringt mich noch um", "{thing} killt mich", "ich lach mich tot {e}",
        "mein {dev} stirbt", "{dev} ist tot", "bin tot vor {x}", "ich könnt {who} umbringen für {why}",
        "{thing} macht mich fertig", "ich bin gestorben {e}",
    ), {"x": ("hunger", "lachen", "langeweile", "hitze", "durst", "müdigkeit", "neugier", "kälte"),
        "thing": ("die hitze", "mein chef", "dieser stau", "die steuererklärung", "der kater", "das treppensteigen",
                  "der muskelkater", "die baustelle", "das wlan", "dieses lied"),
        "dev": ("akku", "handy", "laptop", "drucker", "toaster", "föhn", "router", "kuli"),
        "who": ("ihn", "sie", "meinen bruder", "meine schwester", "dich"),
        "why": ("den witz", "das spoilern", "den spruch", "diese aktion"), "e": ("😂", "🤣", "💀", "😭", "")}),
    Family("de", "sports", "sports", (
        "{team} hat {x}:{y} {res}", "{x}:{y} gegen {team}", "{team} {e}", "heute {sport}", "{sport} war gut",
        "hast du {team} gesehen?",
    ), {"team": ("bayern", "dortmund", "der hsv", "st. pauli", "union", "die eintracht", "schalke", "freiburg",
                 "die nationalmannschaft", "gladbach", "köln", "werder"), "x": SMALL[:6], "y": SMALL[:6],
        "res": ("gewonnen", "verloren", "gespielt"), "e": ("⚽", "🔥", "😤", "🙄", "🎉"),
        "sport": ("joggen", "yoga", "fitness", "schwimmen", "radfahren", "klettern", "tennis", "handball")}),
    Family("de", "weather", "smalltalk", (
        "hier {w}", "{tmp} grad heute {e}", "{w} in {city}", "bei uns {w}", "heute {w}",
    ), {"w": ("regnet es", "schneit es", "scheint die sonne", "ist es neblig", "gewittert es", "ist es schwül",
              "ist es eisig", "stürmt es"), "tmp": ("-5", "0", "3", "12", "18", "24", "30", "34", "37"),
        "city": DE_CITIES, "e": ("🥵", "🥶", "☀️", "🌧️", "❄️", "")}),
    Family("de", "pets", "pets", (
        "{dog} hat {dogact}", "{cat} hat {catact}", "{pet} {state}", "{pet} schläft auf meinem {place}",
        "{dog} will raus", "{cat} will rein",
    ), {"dog": ("der hund", "unser hund", "bello", "der welpe", "die hündin", "paula"),
        "cat": ("die katze", "mein kater", "minka", "unsere katze", "felix"),
        "pet": ("der hund", "die katze", "mein kater", "unser hund", "bello", "minka", "der welpe", "das kaninchen"),
        "dogact": ("die fernbedienung angekaut", "den postboten angebellt", "ein loch gebuddelt", "die wurst geklaut",
                   "sich im matsch gewälzt", "meinen schuh versteckt"),
        "catact": ("einen vogel gefangen", "auf den teppich gekotzt", "mich um 5 geweckt", "die vase umgeworfen",
                   "in den karton gepasst", "die pflanze angeknabbert"),
        "state": ("ist so süß gerade", "schnarcht", "hat zahnwechsel", "ist beim tierarzt, nur impfung",
                  "ist beleidigt", "liegt in der sonne", "hat heute gebadet"),
        "place": ("kopfkissen", "laptop", "schoß", "pulli")}),
)

EN = (
    Family("en", "burst", "number", (
        "quick {n}", "{n}", "another {n}", "{n}!", "{n}?", "number {n}", "{n} please", "and {n}", "now {n}",
        "{n} {n2}", "ok {n}", "{n}!!", "so {n}", "more like {n}", "say {n}", "{n} or {n2}",
    ), {"n": NUMBERS}),
    Family("en", "clock", "number", (
        "{t}", "at {t}?", "{t} works", "be there at {h}", "meet at {t}?", "{h} o'clock?", "not till {t}",
        "train at {t}", "free after {t}", "alarm set for {t}", "{h}ish?", "{h}pm", "{h}am tomorrow",
        "running {n} min late sorry", "half {h}?", "it's already {t} 😱",
    ), {"t": TIMES, "h": tuple(str(n) for n in range(1, 13)), "n": ("5", "10", "15", "20", "30")}),
    Family("en", "dates", "number", (
        "on {m}/{d}", "{d}/{m}/{y}", "{mon} {d}", "birthday's on {mon} {d}", "by {wd} the {o}",
        "appointment {m}/{d} at {t}", "off from the {o} to the {o2}", "{wd} {d} {mon}", "{mon} {d}?",
        "due {mon} {d}",
    ), {"d": DAYS, "o": ORDINALS, "m": MONTHS, "y": YEARS, "mon": EN_MONTHS, "wd": EN_WEEKDAYS, "t": TIMES}),
    Family("en", "amounts", "number", (
        "${p}", "£{p}", "it was ${p}", "{s}x", "{s} of {s2}", "{pc}%", "battery {pc}%", "{pc}% sure",
        "{n} bucks", "cost me £{p} 😳", "{s} please", "lost {s} pounds", "ran {s} miles", "{n} degrees out",
        "{pc}% off", "{n} likes lol", "told him {m} times",
    ), {"p": PRICES_EN, "s": SMALL, "m": SMALL[1:], "n": NUMBERS, "pc": PERCENT}),
    Family("en", "digits", "number", (
        "my new number: {ph}", "{ph}", "zip {zip}", "code is {c}", "order number {k}", "table {s}",
        "platform {s}", "room {r}", "call me on {ph}", "plumber's number {ph}", "apartment {r}", "bus {bus}",
        "tracking {k}", "gate B{s}",
    ), {"ph": PHONES_EN, "zip": ("10001", "94103", "60614", "73301", "02139", "SW1A 1AA", "M1 1AE"),
        "c": CODES, "k": ("112-4471023", "88123456", "TX9934456", "556677", "A10293847"), "s": SMALL,
        "r": ("12", "104", "4B", "305", "21C"), "bus": ("42", "100", "7", "M15", "N5", "X11")}),
    Family("en", "greetings", "greeting", (
        "{g}", "{g} {e}", "{g}, I'm {name}", "{g} I'm new here", "{g}, how does this work?", "{g}! how are you?",
        "{g} it's {name}", "{g}, new here", "{g} bot", "{g} 👋", "{g}, what can you do?", "{g} how do I use this",
        "{g}, my name is {name}", "{g} first time here",
    ), {"g": ("hello", "hi", "hey", "hiya", "yo", "good morning", "good evening", "heya", "howdy", "hey there",
              "hi there", "morning", "evening", "sup", "hello hello", "hii"),
        "name": EN_NAMES, "e": EMOJI}),
    Family("en", "replies", "short", (
        "{y} {e}", "{y}", "{y} {t}", "{n}", "{n} {t}", "{y}{p}", "{n}{p}", "{w}", "{w} {e}", "{y} {y2}",
    ), {"y": ("yes", "yeah", "yep", "okay", "ok", "sure", "fine", "of course", "definitely", "absolutely", "alright",
              "sounds good", "will do", "yup", "yass", "sure thing", "deal"),
        "n": ("no", "nah", "nope", "not really", "rather not", "not yet", "no way", "not now", "nah I'm good"),
        "t": ("thanks", "thank you", "ty", "thx", "cheers"), "w": ("whatever", "dunno", "no idea", "we'll see",
              "maybe", "meh", "hmm", "eh", "mhm", "it's fine", "no biggie", "all good"),
        "p": ("!", ".", "!!", " :)", " :D", "?"), "e": EMOJI}),
    Family("en", "emojimix", "emoji", (
        "{e}", "{e}{e2}", "{e} {e2}", "{e}{e2}{e3}", "{w} {e}", "{e} {w}", "{w}{e}",
    ), {"e": EMOJI_MIX, "w": ("haha", "yay", "thanks", "oh no", "cute", "wow", "omg", "yum", "night", "hahaha",
                              "lol", "nice", "finally", "ugh", "aww", "same")}),
    Family("en", "plans", "plans", (
        "heading to {city} tomorrow", "in {city} on {wd}", "off {go}, brb", "going {go} now",
        "we're driving to {city} {far}", "going {go} {when}", "about to {act}", "gotta {act}", "flying to {city} {wd}",
        "{go} later?", "weekend in {city} 🚗", "gonna {act} then sleep",
    ), {"city": EN_CITIES, "wd": EN_WEEKDAYS, "far": ("next week", "this weekend", "in the summer", "on Friday",
        "over Easter", "for Thanksgiving", "next month"),
        "when": ("tomorrow", "later", "tonight", "after work", "on Friday", "in the morning"),
        "go": ("shopping", "running", "swimming", "to the gym", "to the dentist", "for a walk", "to the movies",
               "to my parents'", "to the pub", "grocery shopping", "to yoga", "to work", "for coffee"),
        "act": ("shower", "cook dinner", "walk the dog", "do laundry", "head out", "clean the kitchen",
                "pick up the kids", "hop on a call", "take a nap", "go to bed", "hit the gym", "grab food")}),
    Family("en", "reminders", "request", (
        "remind me {when} to {task}", "can you remind me to {task} {when}?", "{when}: {task}, remind me pls",
        "don't let me forget to {task}", "remember that {name} {fact}", "note: {name} {fact}",
        "remind me at {t} to {task}", "pls remind me {when} about {thing}",
    ), {"when": ("tomorrow", "tomorrow morning", "tonight", "on Monday", "in an hour", "later", "this weekend",
                 "Friday"),
        "task": ("take out the trash", "call mom", "pay rent", "water the plants", "book the dentist",
                 "send the email", "pick up the dry cleaning", "buy milk", "take my meds", "renew my passport",
                 "return the library books", "text Jess back"),
        "thing": ("the meeting", "the parcel", "the vet", "rent", "the bins", "Dad's birthday"),
        "name": EN_NAMES, "t": TIMES,
        "fact": ("has a birthday on May 3rd", "is vegetarian", "hates cilantro", "moved to Leeds", "got a new job",
                 "is allergic to cats", "is expecting a baby", "plays guitar", "only drinks tea",
                 "has the spare key")}),
    Family("en", "cooking", "cooking", (
        "making {food} tonight", "made {food}", "{food} or {food2}?", "craving {food}", "what can I make with {ing}"
        " and {ing2}?", "{food} 😋", "ordering {food}", "how long in the oven for {food}?", "{food} again lol",
    ), {"food": ("pizza", "pasta", "lasagna", "curry", "soup", "salad", "tacos", "sushi", "pancakes", "chili",
                 "burgers", "mac and cheese", "stir fry", "risotto", "fish and chips", "ramen", "meatloaf",
                 "a roast", "enchiladas", "shepherd's pie"),
        "ing": ("rice", "eggs", "zucchini", "potatoes", "ground beef", "tomatoes", "feta", "spinach", "lentils",
                "chicken", "tofu", "beans")}),
    Family("en", "tired", "sad", (
        "I'm {so} {tired}", "{day} was {bad}", "{tired} {e}", "{so} {tired} today", "{day} was pretty {bad}",
        "just {tired}",
    ), {"so": ("so", "super", "really", "pretty", "totally", "kinda"),
        "tired": ("tired", "wiped", "exhausted", "drained", "beat", "burnt out", "stressed", "fed up", "worn out",
                  "cranky", "sad", "bummed"),
        "day": ("today", "this week", "Monday", "my shift", "the weekend", "work"),
        "bad": ("rough", "long", "a mess", "hard", "not great", "exhausting", "a lot", "stressful")
        , "e": ("😴", "🥱", "😩", "😮‍💨", "🥲", "😫")}),
    Family("en", "hyperbole", "idiom", (
        "I'm dying of {x}", "{thing} is killing me", "I'm dead {e}", "my {dev} is dying", "{dev} just died",
        "dying of {x} rn", "I could kill {who} for {why} lol", "{thing} is the death of me", "{funny} killed me {e}",
    ), {"x": ("hunger", "laughter", "boredom", "heat", "thirst", "curiosity", "cringe", "cold"),
        "thing": ("this heat", "my boss", "this traffic", "this commute", "my taxes", "this hangover", "leg day",
                  "this playlist", "the wifi", "that meme"),
        "funny": ("that meme", "that video", "this tiktok", "your last message", "that joke", "that pun", "leg day",
                  "the ending", "his face"),
        "dev": ("phone", "laptop", "battery", "printer", "toaster", "hairdryer", "router", "pen"),
        "who": ("him", "her", "my brother", "my sister", "you"),
        "why": ("that pun", "the spoiler", "that joke", "eating my fries"), "e": ("😂", "🤣", "💀", "😭", "")}),
    Family("en", "sports", "sports", (
        "{team} {res} {x}-{y}", "{x}-{y} against {team}", "{team} {e}", "{sport} today", "{sport} was good",
        "did you watch {team}?",
    ), {"team": ("the Lakers", "Liverpool", "Arsenal", "the Chiefs", "the Yankees", "Man U", "the Celtics",
                 "Spurs", "the Eagles", "Chelsea", "the Cubs", "England"), "x": SMALL[:6], "y": SMALL[:6],
        "res": ("won", "lost", "drew"), "e": ("⚽", "🏀", "🔥", "😤", "🙄", "🎉"),
        "sport": ("running", "yoga", "gym", "swimming", "cycling", "climbing", "tennis", "pickleball")}),
    Family("en", "weather", "smalltalk", (
        "it's {w} here", "{tmp} degrees today {e}", "{w} in {city}", "so {w2} today", "still {w}",
    ), {"w": ("raining", "snowing", "sunny", "foggy", "storming", "humid", "freezing", "windy"),
        "w2": ("hot", "cold", "grey", "muggy", "nice", "windy"), "tmp": ("-5", "0", "40", "55", "72", "85", "95",
        "30", "12"), "city": EN_CITIES, "e": ("🥵", "🥶", "☀️", "🌧️", "❄️", "")}),
    Family("en", "pets", "pets", (
        "{dog} {dogact}", "{cat} {catact}", "{pet} is {state}", "{pet} is sleeping on my {place}", "{dog} wants out",
        "{cat} wants in",
    ), {"dog": ("the dog", "our dog", "the puppy", "Biscuit", "Max", "my dog"),
        "cat": ("the cat", "my cat", "the kitten", "Luna", "our cat"),
        "pet": ("the dog", "the cat", "my cat", "our dog", "the puppy", "the kitten", "Biscuit", "Luna", "the bunny"),
        "dogact": ("chewed the remote", "barked at the mailman", "dug a hole in the yard", "stole my sandwich",
                   "rolled in mud", "hid my shoe"),
        "catact": ("caught a bird", "threw up on the rug", "woke me up at 5", "knocked over a glass",
                   "fit in a tiny box", "ate my plant"),
        "state": ("so cute right now", "snoring", "teething", "at the vet, just a checkup", "sulking",
                  "sunbathing", "fresh from the groomer"),
        "place": ("pillow", "laptop", "lap", "hoodie")}),
)

FAMILIES = DE + EN
