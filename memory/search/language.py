"""Whether a query is German: more German than English function words (pure; the gate of the second signal)."""
from __future__ import annotations

import re

# Articles, pronouns, particles, auxiliaries and question words: the words bench/second_signal.py's gate counted
# (bench/german_set.py's STOPWORDS for German), so the product decides as the measurement did.
GERMAN = frozenset("""
aber alle allem allen aller alles als also am an andere anderen auch auf aus bei beim bin bis bist
da dabei damit dann das dass dem den denen der des die dies diese diesem diesen dieser dieses doch
dort du durch ein eine einem einen einer eines er es etwa euch euer für gar ganz gerade gern gerne
gibt hab habe haben hat hatte hatten hier ich ihm ihn ihnen ihr ihre ihrem ihren ihrer im immer in
ins ist ja je jede jedem jeden jeder jedes jetzt kann kein keine keinen man mal mehr mein meine
meinem meinen meiner mich mir mit nach nicht noch nochmal nun nur ob oder ohne schon sehr sein
seine seinem seinen seiner seit sich sie sind so soll sollte statt um und uns unser unsere unserem
unseren unserer vom von vor war waren warum was weil welche welchem welchen welcher welches wenn
wer werden wie wieder will wir wird wo wohin womit worauf wurde zu zum zur zwischen eigentlich
denn halt eben irgendwie irgendwas ding dinge nen ne n gab's gibt's wann woher wieso weshalb
über fürs ums übers vors aufs
""".split())
ENGLISH = frozenset("""
the a an and or of to in on at is are was were do does did what when where who how which
i you he she it we they my your his her our their with for from about
""".split())
_SPLIT = re.compile(r"[\s?,]+")


def is_german(text: str) -> bool:
    """More German than English function words; a tie (no function word at all, too) counts as German, the
    default language. Words are split at spaces, question marks and commas, as the measurement split them."""
    words = [w for w in _SPLIT.split(text.lower()) if w]
    return sum(w in GERMAN for w in words) >= sum(w in ENGLISH for w in words)
