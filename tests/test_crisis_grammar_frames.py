"""The crisis grammar's frames (issue 51, second round): what carries over to places, means and verbs its parts do not
list, and the everyday sentences the new frames must leave alone. The dev fillers' figures are floors: the frames were
written looking at them (docs/benchmarks.md says what their first, untuned read was)."""
from __future__ import annotations

import pytest

from bench.crisis_suite import cases, near_misses
from bot.conversation.crisis_grammar import grammar_says, matched_rules


def test_the_dev_fillers_are_found_and_their_near_misses_left_alone() -> None:
    for lang in ("de", "en"):
        dev = [c for c in cases("dev") if c.lang == lang]
        assert sum(grammar_says(c.text) for c in dev) / len(dev) >= 0.92, lang
    assert not [c.id for c in near_misses("dev") if grammar_says(c.text)]


@pytest.mark.parametrize("text", [
    "Ich werd um Mitternacht vom Baukran springen.",  # a place no part lists, in a frame that does
    "Ich steh grad auf dem Silo und spring gleich.",
    "Hab heute nachgeschaut, wie hoch die Talsperre ist. Hoch genug.",
    "Tonight after dinner I'm going up to the water tower and not coming back down.",
    "I'm standing on the edge of the bridge and I'm going to jump",
    "Ich hoffe, dass ich in einer Stunde nicht mehr da bin.",  # a long 'when' between wish and words
    "I tested whether the extension cord holds me.",
    "Hilfe, ich blute so stark, bitte schnell",
    "Hilfe, er hat ein Messer und kommt auf mich zu",
    "I've been giving my things away and I wrote letters to everyone",
    "Heute Nacht mache ich Schluss.",  # a time of several words counts as one word
    "er hat ne waffe. bin im keller. hilfe",
    "im on the train bridge near school and my legs are shaking",
    "Hab alle meine Tabletten genommen und mir ist schwindlig",
])
def test_a_crisis_in_a_frame_is_found(text: str) -> None:
    assert grammar_says(text), matched_rules(text)


@pytest.mark.parametrize("text", [
    "Ich spring gleich noch runter und hol die Post",
    "Help, my nose is bleeding again",
    "help me choose a knife set for my brother",
    "Wie hoch ist eigentlich der Fernsehturm? Hoch genug für eine tolle Aussicht?",
    "I took my cat to the vet today, she hates the carrier",
    "Wir haben endlich unser Testament gemacht",  # one word ('Testament') plays one part, not two
    "Er bedroht mich nicht, er ist nur laut",  # a negation right after the words
    "Ich hab die Tabletten für die Woche abgezählt, Sonntag ist es so weit mit dem neuen Plan",
    "I tested whether the shelf holds my weight, it does",
    "Hilfe, der Herd brennt!",
    "I'm jumping off this call, talk later",
    "Ich will einfach weg sein, raus aus der Stadt",
    # written after read 5 to probe the new frames with what people say every day (none of them in any set)
    "Er isst immer mit Messer und Gabel, sogar Pizza",
    "Sie hat ein Messer in der Hand und schneidet Zwiebeln",
    "I took all my stuff home and now I feel sick from the bus ride",
    "Ich hab alle meine Medikamente genommen wie verschrieben",
    "I googled the lethal dose of caffeine, turns out it's like 80 coffees",
    "Ich hab gegoogelt, wie viele Tabletten Ibuprofen man am Tag nehmen darf",
    "Ich steh grad auf dem Balkon und rauch eine",
    "I'm sat on the bridge waiting for you",
    "Ich will morgen nicht aufwachen, Montag",
    "sorry for everything yesterday, love you",
    "My brother threw me the ball",
    "my last post was about my cat",
    "Ich hab meine Katze zu meiner Nachbarin gebracht, weil ich auf Dienstreise bin",
])
def test_everyday_words_in_the_new_frames_are_left_alone(text: str) -> None:
    assert not grammar_says(text), matched_rules(text)
