"""The explicit crisis layer as a small grammar: words are tagged with the parts they play (a wish, dying, a place
one falls from, a means, getting it ready, a body part, an attacker, an act of violence, the speaker), and a rule
says which parts, in which order and how close, make a message that needs the help line (pure).

A part is a list of words and word stems (`stem*`), and phrases of several words; a word of five letters or more
also matches with one letter dropped, added or two letters swapped ("sterbn", "umbrinegn"), so typos, dialect
spellings, case, missing punctuation and emoji change nothing. A rule names parts and the most words that may stand
between them; a negation between them ("will nicht sterben") breaks it. The grammar knows nothing of sentences in
any set: its words are the parts of speech a crisis is told in, and a new means, place or verb is one word more in
its part.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?|\^|[\U0001F300-\U0001FAFF]", re.UNICODE)
_SENTENCE = re.compile(r"[.!?;:\n]+")

# --- the parts ---------------------------------------------------------------------------------------------------

PARTS: dict[str, tuple[str, ...]] = {
    # the speaker
    "self": ("ich", "i", "ick", "ik", "mir", "mich", "mi", "me", "myself", "im", "i'm", "ive", "i've", "i'll",
             "ill", "hab", "bin", "werd", "will", "wui", "my", "mein*", "meim"),
    "subj": ("ich", "i", "ick", "ik", "i'm", "im", "i've", "ive", "i'll", "^"),
    # wanting, intending, being about to
    "wish": ("will", "wil", "wll", "möchte", "möcht", "mocht", "mag", "mog", "moch", "wui", "wü", "wott",
             "want", "wants", "wanna", "wana", "wish", "going to", "gonna", "gna", "ready to",
             "plan to", "planning to", "about to", "werde", "werd", "lieber", "rather", "am liebsten",
             "hoffe", "hope", "wünsch*", "würde gern*", "would like to", "vorhab*", "decided to", "entschieden",
             "beschlossen", "denk*", "think*", "überleg*",
             "gedacht", "thinking about", "thought about", "bete", "pray",
             "hoffentlich"),
    # dying, not living, ending it
    "die": ("sterben", "sterbn", "sterbe", "tot sein", "tot", "be dead", "die", "umbringen",
            "umbring*", "umzubringen", "töten", "kill myself", "end my life", "end it all", "end myself",
            "unalive*", "suicide", "suizid*", "selbstmord*", "freitod", "aus dem leben", "das leben nehmen",
            "mein leben beenden", "leben beenden", "nicht mehr aufwachen", "nie mehr aufwachen",
            "nimmer aufwachen", "never wake up", "not wake up", "not be here", "not be alive", "disappear forever",
            "für immer verschwinden", "für immer einschlafen", "sleep forever", "nicht mehr da sein",
            "nimmer do sein", "mich hi", "mi hi", "go through with it", "mich erhängen", "mich aufhängen",
            "hang myself", "erhängen", "aufhängen", "mich vergiften", "poison myself", "mich erschießen",
            "shoot myself", "mich ertränken", "drown myself", "overdose", "überdosis", "mir was antun",
            "mir etwas antun", "mir das leben nehmen",
             "aufhören zu existieren", "aufhöre zu existieren", "stop existing", "tot zu sein", "von dieser welt",
             "from this world", "disappear from",
             "dead", "nicht mehr aufzuwachen", "nie wieder aufzuwachen", "aufzuhören zu existieren", "not be alive",
             "to not wake up", "nie wieder aufwachen",
             "mich auflösen", "überfahren", "run over"),
    # living, existing, being here (what a wish not to do is about)
    "live": ("leben", "lebn", "lebe", "live", "living", "exist", "existieren", "da sein", "hier sein",
             "be here", "be alive", "alive", "aufwachen", "wake up", "weiterleben", "weiter leben",
             "on this earth", "auf der welt", "on this planet",
             "aufwach*", "weiterzuleben", "weiterzumachen", "weitermachen", "go on living", "around",
             "existing"),
    "not": ("nicht", "nich", "net", "ned", "nimmer", "nimma", "nemme", "nümme", "nie", "nimmi", "not", "never",
            "don't", "dont", "no", "kein", "keine", "keinen", "niemals", "nöd", "nit"),
    "more": ("mehr", "meh", "more", "anymore", "any more", "longer", "länger", "no more"),
    # places one falls or jumps from, ways under a vehicle
    "height": ("brücke*", "*brücke", "dach", "dachkante", "hochhaus*", "parkhaus*", "balkon*", "fenster",
               "klippe*", "felsen", "turm", "*turm", "aussichtsplattform", "staudamm", "bridge", "roof",
               "rooftop", "ledge", "balcony", "window", "cliff", "tower", "parking garage", "car park", "overpass",
               "building", "hochbrücke", "viadukt", "viaduct", "damm", "steilküste", "edge", "geländer",
               "railing", "stockwerk", "etage", "stock",
             "parkdeck", "*deck", "rocks", "rock", "obersten", "top floor", "tower block", "hochhausdach"),
    "fall": ("spring*", "sprung", "springn", "runterspring*", "hinunterspring*", "stürz*", "fallen lassen",
             "jump", "jumping", "jumped", "leap", "throw myself", "step off", "over the edge",
             "über das geländer", "übers geländer", "über die kante", "drüber klettern", "climb over",
             "ein schritt", "one step", "schau runter", "look down", "looking down", "runtergeschaut"),
    "traffic": ("zug", "züge", "bahn", "s-bahn", "u-bahn", "gleis*", "schienen", "lkw", "laster", "bus", "auto",
                "train", "trains", "tracks", "railway", "truck", "lorry", "bus", "car", "traffic", "verkehr",
                "subway", "tram", "straßenbahn"),
    "under": ("vor", "vors", "unter", "in front of", "under", "onto", "auf die", "auf den", "in den", "into",
             "davor", "drauf", "drunter"),
    "throw": ("werfen", "werf*", "springen", "spring*", "legen", "leg*", "stellen", "stell*",
              "throw", "jump", "step", "lie down", "laufen", "walk"),
    "obstacle": ("baum", "wand", "mauer", "brückenpfeiler", "pfeiler", "betonpfeiler", "leitplanke", "lkw",
                 "gegenverkehr", "tree", "wall", "pillar", "truck", "oncoming", "barrier", "abgrund"),
    # means, and what ties a means to a plan
    "poison": ("tablette*", "*tabletten", "pille*", "medikament*", "paracetamol", "ibuprofen", "insulin",
               "tabs", "pills", "pill", "meds", "medication", "tylenol", "xanax", "benzos", "opioid*", "oxy",
               "rattengift", "poison", "bleach", "bleichmittel", "antifreeze", "frostschutz*", "schlafmittel",
               "morphium", "fentanyl", "tramadol", "lyrica", "tavor", "antidepressiva", "blister",
             "tablett*", "tablettn"),
    "hang": ("seil", "strick", "schlinge", "gürtel", "kabel", "schal", "rope", "noose", "belt", "cord",
             "cable", "ligature", "verlängerungskabel", "hundeleine", "leash", "scarf"),
    "anchor": ("haken", "balken", "dachbalken", "deckenbalken", "türklinke", "geländer", "hals", "stuhl",
               "hook", "beam", "rafter", "neck", "chair", "stool", "doorknob", "door frame", "türrahmen",
               "dachboden", "attic", "ast", "branch", "festgemacht", "festgebunden", "geknotet", "knot*",
               "tied", "hält", "hold", "holds", "trägt", "carry"),
    "blade": ("klinge*", "rasierklinge*", "messer", "cutter", "teppichmesser", "scherbe*", "skalpell", "blade",
              "blades", "razor*", "knife", "box cutter", "glass", "schere"),
    "gun": ("waffe", "pistole", "gewehr", "revolver", "knarre", "gun", "pistol", "rifle", "handgun", "shotgun",
            "dienstwaffe"),
    "gas": ("abgase", "auspuff", "schlauch", "garage", "kohlenmonoxid", "grill", "holzkohle", "exhaust", "hose",
            "carbon monoxide", "charcoal", "motor laufen", "engine running", "helium"),
    "ready": ("ausprobiert", "probiert", "getestet", "teste", "testen", "geknotet", "festgemacht",
              "festgebunden", "tested", "tried", "testing", "tied", "knotted", "wie fest", "how strong",
              "how much weight", "hält", "holds", "trägt", "gekauft", "bought", "besorgt", "geholt", "geladen",
              "loaded", "in der hand", "holding", "in my hand", "ausgesucht", "picked out", "chosen",
              "recherchiert", "researched", "gegoogelt", "googled", "vorbereitet", "prepared", "bereit",
              "ready",
             "reicht", "enough", "genug",
             "got", "set out", "out of", "rausgeholt", "herausgeholt",
             "aus dem schrank", "out of the cabinet", "aus dem safe", "genommen", "took", "zurechtgelegt",
             "bereitgelegt", "mit ins bett", "ins schlafzimmer", "unters kissen", "under my pillow"),
    "amount": ("alle", "alles", "ganze*", "gesamte*", "zu viele", "zuviele", "zu viel", "zvui", "eine menge",
               "handvoll", "all", "whole", "entire", "too many", "handful", "a bunch", "every", "all of",
               "bottle", "flasche", "doppelte", "dreifache", "hundert"),
    "swallow": ("geschluckt", "schluck*", "genommen", "nehm*", "eingeworfen", "intus", "runtergeschluckt",
                "took", "taken", "take", "swallowed", "swallow", "downed", "popped", "drank", "getrunken",
                "trinken", "drink", "gespritzt", "injected",
             "gnomma", "gnommen", "genomma"),
    "hoard": ("gesammelt", "sammle", "sammeln", "gehortet", "horte", "gebunkert", "bunkere", "bereitgelegt",
              "rausgelegt", "zurechtgelegt", "liegen bereit", "liegt bereit", "gezählt", "ausgerechnet",
              "berechnet", "versteckt", "stockpil*", "saved up", "saving up", "collected", "collecting", "hoarding",
              "hoarded", "laid out", "counted", "calculated", "hidden", "hid", "genug", "enough", "reicht",
              "reichen", "tödlich*", "lethal", "letal*",
             "aufgehoben", "aufheb*", "hebe", "rausgelegt",
             "lay out", "set out", "laid out",
             "zurechtgelegt", "zurechtlegen", "mit ins bett", "ins schlafzimmer", "unters kissen", "under my pillow",
             "put aside", "beiseite gelegt", "beiseitegelegt", "hide", "verstecke"),
    "neck": ("hals", "neck", "schlinge", "noose", "kehle", "throat"),
    "against": ("gegen", "into", "frontal", "in den", "in die", "in a", "into a"),
    "drive": ("fahren", "fahr*", "rasen", "lenken", "crash*", "drive", "driving", "steer", "rammen", "brettern"),
    "intent": ("absichtlich", "extra", "wieder", "selbst", "again", "on purpose", "deliberately", "bis es blutet",
               "until it bleeds", "till it bleeds", "until i bleed", "jeden abend", "jede nacht", "every night",
               "nicht aufhören", "can't stop", "cant stop", "tiefer", "deeper", "so tief", "so deep",
             "punishment", "strafe", "bestrafen", "the only thing", "das einzige", "makes me feel", "hilft mir",
             "bleed", "bleeds", "bled", "blutet", "geblutet", "blute", "bis es", "until", "till",
             "blutig", "grün und blau", "black and blue", "open", "auf",
             "feuerzeug", "lighter", "zigarette", "cigarette", "klinge", "sonst halt ich", "or i can't take it",
             "keiner darf", "nobody can see", "keiner weiß", "nobody knows", "bis es besser", "until it got better",
             "bloody", "isn't an accident", "aren't an accident", "kein unfall", "nicht aus versehen"),
    "selfobj": ("mich", "mir", "mi", "myself", "me"),
    "gasmeans": ("auspuff", "abgase", "abgas", "kohlenmonoxid", "holzkohle", "grill", "exhaust",
                 "carbon monoxide", "charcoal", "helium", "gas",
             "laufendem motor", "motor läuft", "motor laufen", "engine running", "motor an"),
    "closed": ("garage", "badezimmer", "bad", "schlafzimmer", "zimmer", "auto", "zelt", "bathroom", "bedroom",
               "room", "car", "tent", "abgedichtet", "sealed", "taped"),
    "threat": ("droht", "drohte", "gedroht", "sagt", "sagte", "gesagt", "schwört", "threatens", "threatened",
               "said", "says", "swore", "will", "wird", "gonna", "going to", "'ll"),
    "killverb": ("umbringen", "umbring*", "töten", "abstechen", "erschießen", "erwürgen", "kill", "stab",
                 "shoot", "strangle", "kaltmachen",
             "abzustech*", "umzubring*", "bring*", "bringt"),
    "razor": ("klinge*", "rasierklinge*", "razor*", "blades", "blade"),
    "without_me": ("ohne mich", "without me", "if i was gone", "if i were gone", "if i was dead", "when i'm gone",
                   "after i'm gone", "wenn ich weg bin", "wenn ich weg wäre", "wenn ich nicht mehr da bin",
                   "wenn ich nicht mehr da wäre", "wenn ich tot bin", "wenn ich tot wäre", "if i disappeared",
                   "if i just disappeared", "mich los", "gone",
             "nicht mehr da wäre", "nicht mehr da bin", "einfach weg wäre", "weg wäre"),
    "better": ("besser", "leichter", "glücklicher", "froh", "happier", "better", "easier", "notice", "merken",
               "auffallen", "vermissen", "miss", "care", "ruhe"),
    "nobody": ("niemand", "keiner", "nobody", "no one", "noone", "alle", "everyone", "jeder", "everybody",
             "keinem", "jemandem"),
    "burden": ("last", "belastung", "burden", "im weg", "in the way", "problem", "zumutung"),
    "tired": ("müde", "tired", "sick", "satt", "erschöpft", "exhausted"),
    "nopoint": ("sinn", "grund", "point", "reason", "kraft", "lust", "zweck", "purpose"),
    "tracks": ("gleis*", "tracks", "schienen", "bahnsteig", "platform", "bahngleis*"),
    "waiting": ("warte*", "waiting", "wait", "nächsten zug", "next train"),
    "sleep": ("schlafen", "einschlafen", "sleep", "go to sleep", "fall asleep"),
    "relief": ("erlösung", "erleichterung", "erleichtert", "relief", "relieved", "peaceful", "friedlich"),
    "death": ("tod", "death", "sterben", "dying", "tot sein", "dead", "überfahren", "hit by"),
    "disappear": ("verschwinden", "disappear", "auflösen", "vanish",
             "aufhört", "aufhören", "stop", "to stop"),
    "forever": ("für immer", "forever", "for good", "never come back", "nie wieder", "nie zurück",
                "permanently"),
    "relapse": ("rückfall", "relapse*", "ruined it", "rückfällig"),
    "cuts": ("cuts", "narben", "scars", "schnitte", "schnittwunden", "wounds"),
    "hiding": ("versteck*", "hiding", "hide", "lange ärmel", "long sleeves", "new ones", "neue", "new", "again",
               "wieder", "picking"),
    "urge": ("drang", "urge", "druck", "craving"),
    "no_return": ("nicht mehr runter", "nimmer runter", "not coming back", "not come back", "nicht mehr zurück",
                  "nie wieder zurück", "fest vor", "made up my mind", "entschieden", "decided", "beschlossen",
                  "ein für alle mal", "once and for all", "das war's", "das wars", "that's it",
             "nicht mehr raus", "nicht mehr rauskommen", "not coming out", "not come back", "never come out",
             "i've decided", "ive decided", "hab mich entschieden"),
    "its_over": ("ist es vorbei", "ists vorbei", "it's over", "its over", "it'll be over", "bin ich weg",
                 "bin i weg", "i'm done", "im done", "i'm gone", "im gone", "ist schluss", "it ends", "hört es auf",
                 "ist alles vorbei", "is it over", "all over", "vorbei", "over"),
    "last_words": ("sag meiner", "sag meinem", "sagt meiner", "sagt meinem", "tell my", "texted my",
                   "one last time", "ein letztes mal", "letzte nachricht", "last message", "passwörter",
                   "passwords", "verschenkt", "gave away", "gave all", "überwiesen", "sent all my", "lieb hab",
                   "love her", "love him", "love you", "danke für alles", "thank you for everything",
                   "thanks for everything",
             "lieb hob", "lieb han", "sag meim", "sag mei", "goodbye letter"),
    "if_silent": ("falls ich", "wenn ich", "if i", "if you don't hear", "nicht mehr antworte", "don't answer",
                  "dont answer", "nicht melde", "nicht mehr melde"),
    "not_fault": ("nicht ihre schuld", "nicht seine schuld", "nicht deine schuld", "nicht eure schuld",
                  "not her fault", "not his fault", "not your fault", "its not his fault", "its not her fault",
                  "not their fault", "nicht dein fehler", "not anyone's fault"),
    "cutting": ("ritz*", "geritzt", "geschnitten", "gschnittn", "schneid*", "cut", "cutting", "sliced", "carved",
                "verbrannt", "burned", "burnt"),
    "bleed": ("blute", "blutet", "bluten", "bleeding", "bleed", "bleeds"),
    "heavy": ("stark", "heavily", "so viel", "a lot", "won't stop", "wont stop", "hört nicht auf", "hört nöd auf",
              "hört net auf", "nicht aufhört", "doesn't stop", "aufhören"),
    "smell": ("riecht", "smells", "smell", "gasgeruch"),
    "breaks": ("bricht", "briht", "brechen", "breaks"),
    "at_me": ("bei mir", "bei uns", "in my", "into my"),
    "resolve": ("ist es so weit", "ist es soweit", "mach ich's", "mach ichs", "mach ich es", "i'll do it",
                "ill do it", "i'm doing it", "im doing it", "brauch ich das alles eh nicht mehr",
                "brauch ich das alles nicht mehr", "brauch ich eh nichts mehr", "won't need any of it",
                "wont need any of it", "won't need it anymore", "won't be needing", "hoch genug", "high enough",
                "tief genug", "deep enough", "es ist entschieden", "i've decided", "ive decided", "it's decided",
                "tonight's the night", "es ist vorbei", "it's over", "its over", "mach ich schluss",
                "nicht mehr raus", "not come back", "not coming back",
             "it happens", "passiert es", "ists vorbei", "is es vorbei", "isch es vorbei"),
    "parting": ("verabschied*", "said goodbye to", "say goodbye to", "saying goodbye to", "abschied genommen",
                "letzte nachricht", "last message", "one last time", "ein letztes mal"),
    "everyone": ("von allen", "to everyone", "allen", "everyone", "everybody", "for good", "für immer",
             "forever", "it's forever", "für immer ist"),
    "travel": ("urlaub", "vacation", "holiday", "reise", "trip", "umzug", "moving", "party", "feier", "firma",
               "job", "kollegen", "colleagues", "abschiedsfeier", "farewell party", "flughafen", "airport",
               "ausland", "abroad", "praktikum", "semester"),
    "thought": ("daran gedacht", "dran gedacht", "nachgedacht", "thinking about", "thought about", "denke daran",
                "denk dran", "denke nur", "bete", "pray"),
    "water_in": ("ins wasser", "in den see", "in den fluss", "ins meer", "into the water", "into the lake",
                 "into the sea", "into the river", "in die see"),
    "hangverb": ("häng", "hänge", "henk", "hang", "hanging"),
    "means": ("seil", "strick", "schlinge", "gürtel", "kabel", "rope", "noose", "belt", "klinge*", "rasierklinge*",
              "razor*", "blade", "blades", "messer", "küchenmesser", "knife", "pistole", "waffe", "gewehr", "gun",
              "pistol", "tablett*", "pille*", "schlaftabletten", "pills", "meds", "gift", "poison"),
    "end_it": ("end it", "ein ende", "mach ich schluss", "mach schluss", "ende machen", "end it all",
               "end everything", "alles beenden"),
    "time": ("heute nacht", "heut nacht", "heute", "heut", "tonight", "today", "jetzt", "now", "gleich",
             "morgen", "tomorrow", "sonntag", "sunday", "wochenende", "weekend", "bald", "soon"),
    "weapon": ("messer", "knife", "waffe", "pistole", "gun", "axt", "axe", "baseballschläger", "bat"),
    "menace": ("droht", "bedroht", "threatens", "threatening", "vor meiner tür", "vor der tür", "at my door",
               "outside my door", "in the hallway", "im flur", "im hausflur", "unter meinem fenster",
               "outside my window", "verfolgt", "following"),
    "standing_on": ("steh", "stehe", "standing on", "i'm on", "im on", "sitz", "sitze", "sitting on"),
    # hurting oneself
    "harm": ("ritz*", "geritzt", "gschnittn", "geschnitten", "schneide", "schneid*", "aufgeschnitten",
             "verbrannt", "verbrenn*", "aufgekratzt", "wehgetan", "weh getan", "weh tun", "verletz*",
             "cut", "cutting", "burn", "burned", "burnt", "burning", "scratch*", "hurt", "hurting", "harm",
             "harming", "bang my head", "hit myself", "starv*", "hungern", "aushungern",
             "kratz*", "zerkratzt", "schlag*", "hau", "haue", "punch*", "carv*", "slice*", "sliced",
             "sliced", "slice", "carved", "carve",
             "gekratzt", "zerkratzt", "geschlagen", "schlagen", "verbrennen"),
    "body": ("arm", "arme", "armen", "unterarm", "handgelenk*", "pulsader*", "bein", "beine", "beinen",
             "oberschenkel", "schenkel", "bauch", "haut", "hüfte", "wrist", "wrists", "arms", "thigh", "thighs",
             "leg", "legs", "skin", "stomach", "hip", "hips", "vein", "veins", "forearm"),
    # hurt by someone else
    "actor": ("er", "sie", "he", "she", "they", "mann", "ehemann", "freund", "exfreund", "ex", "vater", "papa",
              "mutter", "mama", "stiefvater", "stiefmutter", "bruder", "onkel", "partner", "partnerin",
              "freundin", "chef", "nachbar", "husband", "boyfriend", "girlfriend", "father", "dad", "stepdad",
              "mother", "mom", "mum", "brother", "uncle", "wife", "frau", "boss", "neighbour", "neighbor",
              "typ", "guy", "jemand", "someone", "somebody", "mo", "stepfather", "teacher", "lehrer", "coach",
              "trainer", "cousin", "opa", "grandpa", "he's", "she's", "hes", "shes"),
    "strike": ("schlägt", "schlug", "geschlagen", "haut", "gehauen", "würgt", "würgte", "gewürgt",
               "tritt", "getreten", "verprügelt", "prügelt", "bedroht", "eingesperrt", "sperrt",
               "vergewaltigt", "missbraucht", "angegriffen", "gestoßen", "schubst", "geschubst", "hits", "hit",
               "beats", "beat", "beaten", "chokes", "choked", "choking", "strangled", "kicks", "kicked",
               "punches", "punched", "slapped", "slaps", "threatens", "threatened", "raped", "abuses",
               "abused", "locked", "locks", "pushed", "shoves", "shoved", "stabbed", "attacked", "grabbed"),
    "victim": ("mich", "mir", "mi", "me", "us", "uns", "meine kinder", "my kids", "my children", "my son",
               "my daughter", "meinen sohn", "meine tochter",
             "schwester", "bruder", "mama", "mutter", "kinder", "kind", "sohn", "tochter", "sister", "brother",
             "mom", "mum", "kids", "son", "daughter", "baby", "uns alle", "us all",
             "ihn", "him"),
    # saying goodbye for good
    "farewell": ("abschiedsbrief*", "abschiedsnachricht", "abschied", "lebewohl", "leb wohl", "lebt wohl",
                 "goodbye", "good bye", "farewell", "suicide note", "last message", "letzte nachricht",
                 "für immer", "forever", "for good", "testament", "letzter wille", "verabschied*",
                 "say goodbye", "sag tschüss", "tschüss sagen", "ade", "pfiat", "adieu", "bye forever"),
    "giveaway": ("verschenkt", "verschenke", "weggegeben", "gave away", "giving away", "give away",
                 "vermacht", "hinterlass*", "passwörter", "passwords", "kümmer dich um", "take care of my",
                 "kümmere dich um", "versorg*", "soll bekommen", "soll kriegen", "can have my", "kann haben",
                 "aufgeschrieben", "written down", "sorry for everything", "tut mir leid für alles",
                 "danke für alles", "thanks for everything", "thank you for everything", "i love you all",
                 "hab euch lieb", "ich liebe euch",
             "zur nachbarin", "zu meiner nachbarin", "zum nachbarn", "to the neighbour's", "to the neighbor's",
             "to my neighbour", "to my neighbor", "testament", "my will", "made my will", "überwiesen", "überweis*",
             "sent all my money", "all my stuff away", "meine sachen"),
    "gone": ("weg", "gone", "tot", "dead", "nicht mehr da", "nicht mehr hier", "no longer here", "not around",
             "nimmer do", "not here anymore", "no more", "bald vorbei", "over soon", "vorbei", "over"),
    # acute danger
    "danger": ("einbrechen", "eingebrochen", "einzubrechen", "einbrecher", "einbruch", "breaking in",
               "break in", "broke in", "breaking into", "trying to get in", "trying to get into", "intruder",
               "verfolgt mich", "folgt mir", "following me", "followed me", "stalking me", "stalkt mich",
               "locked me in", "bewusstlos", "unconscious", "atmet nicht", "not breathing", "barely breathing",
               "kann nicht atmen", "can't breathe", "cant breathe", "blute stark", "blutet stark",
               "bleeding heavily", "won't stop bleeding", "hört nicht auf zu bluten", "schwarz vor augen",
               "overdosed", "zu viele tabletten", "too many pills", "reagiert nicht mehr", "not responding",
               "bedroht mich", "threatening me", "hiding in the closet", "hiding from him", "hiding from her",
               "im bad eingeschlossen", "eingeschlossen", "mann in meiner wohnung", "jemand in meiner wohnung",
               "someone in my house", "someone in my apartment", "nach gas", "smells like gas",
             "verfolgt mi", "verfolgt uns", "follows me", "is following me", "bin eingesperrt",
             "im keller eingesperrt", "locked in the", "locked in my", "reinzukommen", "versucht reinzukommen",
             "keine luft", "koane luft", "no air", "forced me to have sex", "forces me to have sex",
             "zwingt mich zum sex", "zum sex gezwungen", "zwingt mich zu sex",
             "zu sex gezwungen", "mich zu sex", "forced me to have sex", "raped me", "vergewaltigt",
             "brennt in meiner", "es brennt", "fire in my", "house is on fire", "drank bleach", "bleach getrunken",
             "reiniger getrunken"),
}

# Words that put everything at a distance: a film, a book, a study, the news, a game, the past, a recovery; with
# one of them the grammar says nothing unless the person says, now, in their own words that they want to die.
DISTANCE = ("film", "filme", "films", "serie", "folge", "staffel", "kapitel", "buch", "roman", "hörbuch", "podcast",
            "doku", "album", "song", "lied", "artikel", "nachrichten", "statistik", "studie", "seminar", "referat",
            "hausarbeit", "vorlesung", "klausur", "prüfung", "workshop", "kurs", "schulung", "ausbildung",
            "tatort", "krimi", "spiel", "game", "games", "movie", "show", "episode", "season", "character",
            "book", "novel", "lecture", "class", "paper", "thesis", "training", "news", "statistics",
            "prävention", "prevention", "jahre ohne", "years without", "ohne selbstverletzung", "früher", "damals",
            "years ago", "jahren", "used to", "lange vorbei",
            "recovery", "clean seit", "clean since", "glad i stayed", "zelda", "minecraft", "fortnite",
            "videospiel", "videogame", "video game", "level", "boss", "spielfigur", "charakter", "szene", "scene",
            "rolle", "role", "theater", "theatre", "schauspiel*", "lyrics", "songtext", "witz", "joke", "meme",
            "gedicht", "poem", "unterricht", "deutschunterricht", "english class", "lesson",
            "back in", "in college", "als teenager", "when i was", "studium", "psychologie", "thema", "topic",
            "shift", "schicht", "patient*", "notaufnahme", "ehrenamt*", "volunteer*", "ausbildung")

# Idioms that carry the words of dying and mean something else; a match inside one is no match.
IDIOMS = ("vor lachen", "vor langeweile", "vor hunger", "vor durst", "vor hitze", "vor kälte", "vor neugier",
          "vor scham", "vor angst", "of laughter", "of laughing", "laughing", "of boredom", "of hunger",
          "of embarrassment", "lach mich tot", "lache mich tot", "lachen mich tot", "totlachen", "todmüde",
          "todschick", "totgelacht", "to death", "zu tode", "dying to", "die for", "killing it", "killed it",
          "kill it", "nailed it", "bringt mich um vor", "akku", "battery", "handy", "phone", "laptop", "pflanze",
          "plant", "plants", "blume", "blumen", "auto springt", "batterie", "deadline", "server", "prozess",
          "process", "kill the", "kill time", "zeit totschlagen", "schlägt mir vor", "schlug mir vor", "schlägt vor",
          "aufs gemüt", "auf den magen", "auf die stimmung", "aufs gemüt")


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


_GAMES = ("beim", "aus versehen", "versehentlich", "jokingly", "im spaß", "zum spaß", "puns", "witze", "jokes",
          "out of the way", "spoil*", "spoiler", "spiel*", "game", "games", "schach", "chess", "karten", "cards",
          "tennis", "tischtennis", "mario",
          "kart", "fifa", "wette", "bet", "rennen", "race", "match", "runde", "round", "quiz", "wettkampf",
          "training", "sparring", "kampfsport", "boxen", "boxing", "judo", "karate", "kickbox*", "fußball",
          "football", "soccer", "volleyball", "basketball", "handball", "eishockey", "hockey", "vorschlag",
          "gegner", "opponent", "vorgeschlagen", "proposes", "suggests", "tor", "goal", "punkte", "points",
          "record", "rekord", "high score", "highscore", "bestzeit")
_WATER = ("ins wasser", "in den see", "in den fluss", "ins meer", "in den pool", "ins becken", "into the water",
          "into the lake", "into the river", "into the sea", "into the pool", "baden", "schwimmen", "swim",
          "swimming", "freibad", "schwimmbad", "fallschirm*", "bungee*", "parachute", "skydiv*", "klippenspring*",
          "cliff diving", "trampolin*", "sprungturm", "zehner", "10er", "dreier", "diving", "tauchen", "ski",
          "schanze", "hürde*", "hurdle*", "seilspring*", "weitsprung", "hochsprung", "kletter*", "climb*",
          "parkour", "sommer", "summer")
_BREAKUP = ("mit ihr", "mit ihm", "mit dir", "with her", "with him", "with you", "für heute", "for today",
            "arbeit", "work", "feierabend", "büro", "office", "typ", "guy", "der richtige", "the one", "beziehung",
            "relationship", "mit meinem freund",
            "mit meiner freundin", "serie", "rauchen", "smoking", "alkohol", "diät", "diet")
_TRAVEL = ("urlaub", "vacation", "holiday", "reise", "trip", "umzug", "moving", "party", "feier", "firma",
           "kollegen", "colleagues", "abschiedsfeier", "farewell party", "flughafen", "airport", "ausland", "abroad",
           "praktikum", "semester", "bahnhof", "station", "rente", "retire*", "notar", "notary", "lawyer",
           "anwalt", "vorsorge", "versicherung", "insurance")
_ACCIDENT = ("ofen", "herd", "oven", "stove", "bügeleisen", "kochen", "cooking", "backen", "baking", "rasier*",
             "shaving", "by accident", "aus versehen", "versehentlich", "accidentally", "garten", "gardening",
             "werkstatt", "sunburn", "sonnenbrand", "tattoo*", "piercing", "arzt", "doctor", "operation",
             "surgery", "katze", "cat", "hund", "dog", "zwiebel*", "onion*", "gemüse", "vegetables",
             "messer beim", "beim schneiden", "dosenöffner", "can opener", "papercut", "papierschnitt")
_JOKING = ("😂", "🤣", "😆", "lol", "lmao", "rofl", "haha", "hahaha", "xd", "wenn ich noch", "if i have to",
           "if i hear", "one more", "noch ein", "noch eine", "noch einmal", "one more time")
# After 'leben'/'live': a way of living, not life ('nicht mehr so leben', 'live in this city'); before 'world' it is
# life again ('in dieser Welt').
_WAY_OF_LIVING = frozenset({"wie", "in", "with", "mit", "bei", "like", "im", "at", "near", "zusammen",
                            "together", "alone", "allein", "hier", "here", "there", "dort", "da"})
# 'die' is English only after these ('want to die'); else it is the German article ('vermisse die Stunden').
_BEFORE_DIE = frozenset({"to", "wanna", "gonna", "just", "i", "i'd", "id", "would", "could", "should", "rather",
                         "and", "or", "simply", "will", "ll", "i'll", "ill", "shall", "might", "let", "me", "not"})
_WORLD = frozenset({"welt", "world", "dieser", "this", "der", "the"})

_HANG_HARMLESS = ("wäsche", "laundry", "boot", "boat", "zelt", "tent", "camping", "schaukel", "swing", "umzug",
                  "moving", "abschlepp*", "tow", "hund", "dog", "hose", "hosen", "jeans", "pants", "kleid",
                  "hängematte", "hammock", "boxsack", "punching bag", "lampe", "lamp", "bild", "picture",
                  "kletter*", "climb*", "turnen", "gym", "ringe", "rings")
_ANIMALS = ("katze", "kater", "cat", "hund", "dog", "welpe", "puppy", "kitten", "vogel", "bird", "möwe",
            "seagull", "ente", "duck", "gans", "goose", "pferd", "horse", "kuh", "cow", "ziege", "goat")

RULES: tuple[Rule, ...] = (
    # wishing to die, or not to live
    Rule("wish_die", ("wish", "die"), gap=4, subject=True, void=_JOKING),
    Rule("wish_not_live", ("wish", "not", "live"), gap=4, no_not=False, void=("ohne", "without") + _JOKING,
         subject=True),
    Rule("not_more_live", ("not", "more", "live"), gap=1, no_not=False, void=("ohne", "without")),
    Rule("wish_harm_self", ("wish", "selfobj", "harm"), gap=3),
    Rule("wish_harm_self_en", ("wish", "harm", "selfobj"), gap=3),
    # plans: a height and a fall, a vehicle to step in front of, a car into a wall
    Rule("fall_height", ("height", "fall"), gap=7, window=True, void=_WATER + _JOKING),
    Rule("under_traffic", ("under", "traffic", "throw"), gap=3),
    Rule("against_obstacle", ("against", "obstacle", "drive"), gap=3),
    Rule("drive_against", ("drive", "against", "obstacle"), gap=4),
    # means made ready
    Rule("poison_hoard", ("poison", "hoard"), gap=6, window=True),
    Rule("poison_amount", ("amount", "poison", "swallow"), gap=5, window=True),
    Rule("hang_test", ("hang", "anchor", "ready"), gap=8, window=True, void=_HANG_HARMLESS),
    Rule("hang_neck", ("hang", "neck"), gap=4, window=True),
    Rule("gun_ready", ("gun", "ready"), gap=5, window=True, void=_GAMES),
    Rule("gas_closed", ("gasmeans", "closed"), gap=6, window=True, void=("kochen", "cooking", "grillen", "bbq",
                                                                          "heizung", "heating", "ballon*")),
    # hurting oneself
    Rule("harm_body", ("harm", "body"), gap=5, window=True, void=_ACCIDENT),
    Rule("blade_body", ("blade", "body"), gap=4, window=True, void=_ACCIDENT),
    Rule("harm_intent", ("harm", "selfobj", "intent"), gap=6, window=True, void=_ACCIDENT),
    # hurt by someone else
    Rule("actor_strikes_me", ("actor", "strike", "victim"), gap=3, void=_GAMES),
    Rule("actor_me_struck", ("actor", "victim", "strike"), gap=4, void=_GAMES),
    Rule("threat_kill_me", ("actor", "threat", "victim", "killverb"), gap=4, void=_GAMES + _JOKING),
    Rule("threat_kill_me_en", ("actor", "threat", "killverb", "victim"), gap=3, void=_GAMES + _JOKING),
    # goodbyes
    Rule("farewell_gone", ("farewell", "gone"), gap=6, window=True),
    Rule("giveaway_gone", ("giveaway", "gone"), gap=8, window=True, void=_TRAVEL),
    Rule("giveaway_farewell", ("giveaway", "farewell"), gap=8, window=True, void=_TRAVEL),
    # said in so many words, with the parts around them
    Rule("without_me_better", ("without_me", "better"), gap=6, window=True),
    Rule("nobody_notice_gone", ("nobody", "better", "without_me"), gap=8, window=True),
    Rule("burden_to_all", ("burden", "nobody"), gap=3, window=True, void=("kein", "keine", "no", "not", "nicht")),
    Rule("tired_of_living", ("tired", "live"), gap=2),
    Rule("no_point_living", ("nopoint", "live"), gap=6, window=True),
    Rule("at_the_tracks", ("tracks", "waiting"), gap=8, window=True),
    Rule("under_traffic_after", ("traffic", "throw", "under"), gap=4, window=True, void=_WATER),
    Rule("sleep_never_wake", ("sleep", "not", "live"), gap=3, no_not=False, void=_JOKING),
    Rule("death_relief", ("death", "relief"), gap=5, window=True),
    Rule("disappear_forever", ("disappear", "forever"), gap=5, window=True),
    Rule("not_wish_live_more", ("not", "wish", "live", "more"), gap=3, no_not=False),
    Rule("relapse_harm", ("relapse", "harm"), gap=8, window=True),
    Rule("hidden_cuts", ("cuts", "hiding"), gap=5, window=True, void=_ACCIDENT),
    Rule("urge_to_harm", ("urge", "harm"), gap=4, window=True),
    Rule("harm_again", ("harm", "intent"), gap=2, window=True, void=_ACCIDENT),
    Rule("razor_laid_out", ("razor", "hoard"), gap=5, window=True),
    Rule("strike_actor_me", ("strike", "actor", "victim"), gap=2, void=_GAMES),
    Rule("actor_brings_me_um", ("actor", "killverb", "victim"), gap=3, void=("noch", "still", "mit seinen",
                                                                              "mit ihren") + _JOKING),
    Rule("hang_bought", ("hang", "ready"), gap=5, window=True, void=_WATER + _HANG_HARMLESS),
    Rule("height_no_return", ("height", "no_return"), gap=10, window=True, void=_WATER + _JOKING),
    Rule("last_words_over", ("last_words", "its_over"), gap=12, window=True, void=_JOKING),
    Rule("silent_not_fault", ("if_silent", "not_fault"), gap=12, window=True),
    Rule("cut_myself", ("selfobj", "cutting"), gap=3, subject=True, void=_ACCIDENT + ("haare", "hair", "nägel",
                                                                                     "nails", "pony", "bangs")),
    Rule("bleeding_heavily", ("bleed", "heavy"), gap=4, window=True, void=("nase", "nose", "zahn", "tooth",
                                                                            "periode", "period", "tage")),
    Rule("smells_of_gas", ("smell", "gasmeans"), gap=4, window=True, void=("herd", "stove", "grill", "bbq")),
    Rule("breaking_in", ("breaks", "at_me"), gap=4, window=True),
    Rule("better_to_die", ("better", "die"), gap=4, void=_JOKING),
    Rule("thought_of_dying", ("thought", "die"), gap=4, void=_JOKING + ("oma", "opa", "grandma", "grandpa")),
    Rule("height_enough", ("height", "resolve"), gap=10, window=True),
    Rule("throw_under_traffic", ("throw", "under", "traffic"), gap=3),
    Rule("onto_the_tracks", ("throw", "tracks"), gap=4),
    Rule("into_the_water", ("water_in", "no_return"), gap=8, window=True),
    Rule("hang_myself", ("hangverb", "selfobj"), gap=1, void=("bild", "picture", "wäsche", "laundry", "out")),
    Rule("means_resolve", ("means", "resolve"), gap=12, window=True, void=_JOKING),
    Rule("means_hoard", ("means", "hoard"), gap=6, window=True),
    Rule("razor_got", ("razor", "ready"), gap=5, window=True,
         void=("rasier*", "shave", "shaving", "beine", "new blade", "for my razor", "neue klinge", "bart", "beard")),
    Rule("gun_taken", ("gun", "ready"), gap=8, window=True, void=_GAMES),
    Rule("parting_forever", ("parting", "everyone"), gap=10, window=True, void=_TRAVEL),
    Rule("parting_resolve", ("parting", "resolve"), gap=12, window=True, void=_TRAVEL),
    Rule("giveaway_resolve", ("giveaway", "resolve"), gap=12, window=True, void=_TRAVEL),
    Rule("end_it_now", ("end_it", "time"), gap=4, window=True, void=_BREAKUP),
    Rule("weapon_menace", ("weapon", "menace"), gap=8, window=True, void=_GAMES + _JOKING),
    Rule("standing_with_rope", ("standing_on", "hang"), gap=8, window=True, void=_HANG_HARMLESS),
    Rule("cut_myself_en", ("cutting", "selfobj"), gap=2, subject=True, void=_ACCIDENT + ("hair", "nails")),
)
# Parts that need the help line alone, whatever stands around them.
ALONE = ("danger",)
ALONE_WORDS = ("suizid", "suizidal", "selbstmord", "freitod", "suicide", "suicidal", "unalive", "kms",
               "abschiedsbrief", "suicide note", "lebensmüde", "selbstverletzung", "self harm", "selfharm",
               "self-harm", "ritze mich", "ritz mich", "pulsadern", "strangulier*", "erhäng*", "aufhäng*",
               "hang myself", "hanging myself", "überdosis", "overdose", "overdosed", "goodbye letter",
               "goodbye note", "brauch ich das alles eh nicht mehr", "won't need any of it anyway",
               "wont need any of it anyway", "won't be a burden", "wont be a burden", "won't be for long",
               "wont be for long", "nicht mehr lange eine last",
               # what a person says of themselves in a crisis, in so many words
               "kill myself", "killing myself", "end my life", "ending my life", "end my own life",
               "mich umzubringen", "ich mich umbringe", "ich mich umbringen will", "ich bringe mich um",
               "ich bring mich um", "i bring mi um", "ich bring mi um", "mir das leben nehmen",
               "mir das leben zu nehmen", "sich das leben nehmen",
               "sich das leben zu nehmen", "sich umbringen", "sich umzubringen", "kill herself", "kill himself",
               "kill themselves", "end her life", "end his life", "end their life", "take my own life",
               "take my life", "warum lebe ich", "why am i still alive", "why do i even exist",
               "point of being alive", "point of living", "point in living", "keinen ausweg mehr", "no way out",
               "nobody would miss me", "niemand würde mich vermissen", "keiner würde mich vermissen",
               "mich alle los", "ihr mich los", "lebwohl", "leb wohl", "lebt wohl", "last message from me",
               "my last message", "meine letzte nachricht", "don't try to find me", "dont try to find me",
               "such mich nicht", "sucht mich nicht", "gekannt zu haben", "nice knowing you",
               "if you don't hear from me", "if you dont hear from me", "falls ich mich morgen nicht melde",
               "falls ich mich nicht mehr melde", "wenn ich mich nicht mehr melde", "abschied von allen",
               "notes for everyone", "letters to my family", "briefe an alle", "wo mich keiner findet",
               "wo mich niemand findet", "where no one will find me", "where nobody will find me",
               "on the ledge", "roof edge", "auf der dachkante", "fasst mich an", "touches me",
               "kommt nachts in mein zimmer", "comes into my room at night", "folgt mir nach hause",
               "weiß wo ich wohne", "knows where i live", "relapsed on sh", "sh rückfall",
               "wie ich es mache", "how i'm going to do it", "how i'll do it", "nicht mehr leben will",
               "nicht mehr leben möchte", "egal ob ich morgen noch lebe", "egal ob ich noch lebe",
               "don't care if i live", "dont care if i live", "don't care if i wake up", "the end for me",
               "das war's für mich", "das wars für mich", "keine zukunft für mich", "no future for me",
               "last week alive", "last day alive")
# ALONE_WORDS that only talk about the subject in a distanced message (a study of suicide, a news item)
_TOPIC_ONLY = frozenset({"suizid", "suicide", "selbstmord", "freitod", "selbstverletzung", "self harm", "selfharm",
                         "self-harm"})


def tokens(text: str) -> list[str]:
    """The words of a text, lower case, umlauts and ß kept, apostrophes inside words kept."""
    return [w.replace("’", "'") for w in _TOKEN.findall(text.replace("’", "'").casefold())]


def _near(word: str, entry: str) -> bool:
    """Whether a word is the entry with one letter dropped, one added or two neighbours swapped (entries of 5+)."""
    if len(entry) < 4 or abs(len(word) - len(entry)) > 1 or word[0] != entry[0]:
        return False
    if len(word) == len(entry):
        diff = [i for i, (a, b) in enumerate(zip(word, entry)) if a != b]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == entry[diff[1]] \
            and word[diff[1]] == entry[diff[0]]
    if len(entry) < 5:
        return False
    short, long_ = (word, entry) if len(word) < len(entry) else (entry, word)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


def _word_matches(word: str, entry: str, fuzzy: bool = True) -> bool:
    """One word against one entry word: exact, a stem (`stem*`), an ending (`*ending`), or (fuzzy) a near typo."""
    if entry.endswith("*"):
        return word.startswith(entry[:-1])
    if entry.startswith("*"):
        return word.endswith(entry[1:]) and len(word) > len(entry)
    return word == entry or (fuzzy and _near(word, entry))


def _entry_words(entry: str) -> tuple[str, ...]:
    """An entry as words, its `*` kept at the start or end of a word."""
    marked = entry.replace("*", "zqstemqz")
    return tuple(w.replace("zqstemqz", "*") for w in tokens(marked))


@functools.cache
def _entries(part: str) -> tuple[tuple[str, ...], ...]:
    """A part's entries as word sequences."""
    return tuple(_entry_words(e) for e in PARTS[part])


class _Index:
    """Entries looked up by their first word: exactly, by a typo of it, by its stem or its ending."""

    def __init__(self, entries: Sequence[tuple[str, ...]], fuzzy: bool) -> None:
        self.fuzzy = fuzzy
        self.exact: dict[str, list[tuple[str, ...]]] = {}
        self.near: dict[str, list[tuple[str, ...]]] = {}  # a typo of a first word (one dropped or swapped letter)
        self.stems: dict[str, list[tuple[str, ...]]] = {}  # by a stem's first three letters
        self.endings: list[tuple[str, ...]] = []
        for entry in entries:
            first = entry[0]
            if first.endswith("*"):
                self.stems.setdefault(first[:3], []).append(entry)
            elif first.startswith("*"):
                self.endings.append(entry)
            else:
                self.exact.setdefault(first, []).append(entry)
                for variant in _typos(first) if fuzzy else ():
                    self.near.setdefault(variant, []).append(entry)

    def candidates(self, word: str) -> list[tuple[str, ...]]:
        """The entries whose first word may match the word (checked whole by `_word_matches`)."""
        found = list(self.exact.get(word, ())) + list(self.near.get(word, ())) + list(self.stems.get(word[:3], ()))
        if self.fuzzy and len(word) >= 6:  # a letter too many: the word without it is an entry's first word
            for k in range(len(word)):
                found.extend(self.exact.get(word[:k] + word[k + 1:], ()))
        return found + self.endings


def _typos(word: str) -> set[str]:
    """The word with one letter dropped (words of 5+) or two neighbours swapped (4+), as `_near` accepts them."""
    out = set()
    if len(word) >= 5:
        out |= {word[:k] + word[k + 1:] for k in range(1, len(word))}
    if len(word) >= 4:
        out |= {word[:k] + word[k + 1] + word[k] + word[k + 2:] for k in range(1, len(word) - 1)}
    out.discard(word)
    return out


@functools.cache
def _index(entries: tuple[tuple[str, ...], ...], fuzzy: bool) -> _Index:
    """The index of a tuple of entries, made once."""
    return _Index(entries, fuzzy)


def _spans(words: Sequence[str], entries: tuple[tuple[str, ...], ...], fuzzy: bool = False) -> list[tuple[int, int]]:
    """Where entries match: (first word, word after the last) for each match; with `fuzzy`, typos of a letter too
    (the parts and the lone words; idioms and the words that void a rule match exactly)."""
    index = _index(entries, fuzzy)
    found = []
    for start, word in enumerate(words):
        for entry in index.candidates(word):
            end = start + len(entry)
            if end <= len(words) and all(_word_matches(words[start + k], entry[k], fuzzy)
                                         for k in range(len(entry))):
                found.append((start, end))
    return sorted(set(found))


def _tagged(words: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
    """Every part's matches in the words."""
    return {part: _spans(words, _entries(part), fuzzy=True) for part in PARTS}


@functools.cache
def _phrase_entries(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Phrases as word sequences (with stems)."""
    return tuple(_entry_words(phrase) for phrase in phrases)


def _masked(words: list[str]) -> list[str]:
    """The words with the idioms blanked out ('ich lach mich tot' says nothing)."""
    out = list(words)
    for start, end in _spans(words, _phrase_entries(IDIOMS)):
        for k in range(max(0, start - 2), min(len(out), end + 1)):
            out[k] = "·"
    return out


def _chain(tags: dict[str, list[tuple[int, int]]], parts: Sequence[str], gap: int, nots: list[tuple[int, int]],
           no_not: bool) -> bool:
    """Whether the parts follow each other in this order, each within `gap` words of the one before."""
    def follow(index: int, after: int) -> bool:
        if index == len(parts):
            return True
        for start, end in tags[parts[index]]:
            if index and not (after <= start <= after + gap):
                continue
            if index and no_not and any(after <= n0 and n1 <= start for n0, n1 in nots):
                continue
            if follow(index + 1, end):
                return True
        return False

    return follow(0, 0)


def _window(tags: dict[str, list[tuple[int, int]]], parts: Sequence[str], width: int) -> bool:
    """Whether every part matches somewhere within `width` words of one another, in any order."""
    first = parts[0]
    for start, _ in tags[first]:
        if all(any(abs(s - start) <= width for s, _ in tags[part]) for part in parts[1:]):
            return True
    return False


def matched_rules(text: str) -> list[str]:
    """The names of the rules (and lone parts) the text matches; empty when it needs no help line by the grammar."""
    words = _masked([w for sentence in _SENTENCE.split(text) if sentence.strip() for w in ["^", *tokens(sentence)]])
    if not words:
        return []
    tags = _tagged(words)
    tags["live"] = [(a, b) for a, b in tags["live"] if not _way_of_living(words, b)]
    tags["^"] = [(a, a + 1) for a, w in enumerate(words) if w == "^"]
    tags["die"] = [(a, b) for a, b in tags["die"] if words[a] != "die" or (a and words[a - 1] in _BEFORE_DIE)]
    tags["live"] = [(a, b) for a, b in tags["live"] if not (a and words[a - 1] in ("so", "like", "wie"))]
    calm = bool(_spans(words, _phrase_entries(_ANIMALS + _JOKING)))
    found = [f"alone:{part}" for part in ALONE if tags[part] and not calm]
    found += [f"word:{words[s]}" for s, _ in _spans(words, _phrase_entries(ALONE_WORDS), fuzzy=True)]
    nots = tags["not"]
    for rule in RULES:
        if rule.void and _spans(words, _phrase_entries(rule.void)):
            continue
        if rule.subject and not _spoken_by_self(tags, rule.parts[0]):
            continue
        if rule.window:
            hit = _window(tags, rule.parts, rule.gap) and not (rule.no_not and _negated(tags, rule.parts, nots))
        else:
            hit = _chain(tags, rule.parts, rule.gap, nots, rule.no_not)
        if hit:
            found.append(rule.name)
    return found


def _way_of_living(words: Sequence[str], end: int) -> bool:
    """Whether the words after a 'leben'/'live' speak of a way of living ('so', 'in this city', 'with roommates')."""
    return end < len(words) and words[end] in _WAY_OF_LIVING and not (
        end + 1 < len(words) and words[end + 1] in _WORLD and (end + 2 >= len(words) or words[end + 2] in
                                                                ("welt", "world", "^")))


def _spoken_by_self(tags: dict[str, list[tuple[int, int]]], part: str) -> bool:
    """Whether a match of the part has the speaker right around it: 'ich will', 'will ich', 'I really want', or a
    sentence that begins with it ('Will nur noch sterben')."""
    return any(any(s == a - 1 or s == b or (a - 3 <= s <= a - 2 and tags_word(tags, s) != "^")
                   for s, _ in tags["subj"]) for a, b in tags[part])


def tags_word(tags: dict[str, list[tuple[int, int]]], start: int) -> str:
    """'^' when a subject match at `start` is a sentence's start, else 'word'."""
    return "^" if (start, start + 1) in tags.get("^", []) else "word"


def _negated(tags: dict[str, list[tuple[int, int]]], parts: Sequence[str], nots: list[tuple[int, int]]) -> bool:
    """Whether a negation stands right before a part of a window rule ('nicht gesammelt', 'no pills')."""
    return any(n1 in (s, s - 1) for part in parts for s, _ in tags[part] for _, n1 in nots)


def distanced(text: str) -> bool:
    """Whether the text talks about a film, a book, a study, the news, a game or the past."""
    return bool(_spans(tokens(text), _phrase_entries(DISTANCE)))


def grammar_says(text: str) -> bool:
    """True when the grammar finds a crisis told in the text (a distanced text only with a wish of the speaker's)."""
    found = matched_rules(text)
    if not found:
        return False
    if not distanced(text):
        return True
    return any(name in ("wish_die", "wish_not_live", "self_die") for name in found)
