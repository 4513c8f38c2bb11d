"""How the crisis detector reads documents: the whole text in overlapping pieces (`crisis_chunks`), as a turn does.

Usage: python -m bench.crisis_documents [--rows N] [--sessions N]

1. Found inside a document: train-split crises of bench/data/crisis_set.tsv that the patterns miss (the classifier's
   own finds), alone and set in the middle of everyday sentences of growing length, as a piece of a letter would
   read; how many the classifier still finds. Only the train split is read (tuning may look at it).
2. False alarms on ordinary long text: the sessions of the LoCoMo conversations beside the repository (../shared,
   read at run time, never copied) as documents, cut into pieces; how many pieces and documents each layer flags.
3. The time: seconds per piece of the classifier (the bundled e5, and USE when its weights read it) on this machine.

The everyday sentences are written here, not taken from any set.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from bench.crisis import train_rows

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo_conv0-4.json"
EVERYDAY = {
    "de": ["Am Wochenende waren wir im Garten und haben Tomaten gepflanzt.", "Der Bus kam wieder zu spät, also bin "
           "ich gelaufen.", "Meine Schwester hat mir ein Rezept für Linsensuppe geschickt.", "Im Büro gab es heute "
           "Kuchen, weil Paul Geburtstag hatte.", "Die Steuererklärung muss bis Ende Juli fertig sein.",
           "Wir haben überlegt, im Herbst an die Ostsee zu fahren."],
    "en": ["We spent the weekend in the garden planting tomatoes.", "The bus was late again, so I walked.",
           "My sister sent me a recipe for lentil soup.", "There was cake at the office because it was Paul's "
           "birthday.", "The tax return has to be done by the end of July.", "We thought about going to the coast "
           "in autumn."],
}
CONTEXTS = (0, 300, 600, 1_000, 1_500)  # characters of everyday sentences around the crisis


def around(text: str, lang: str, chars: int, rng: random.Random) -> str:
    """The text with about `chars` characters of everyday sentences around it, half before, half after."""
    before: list[str] = []
    after: list[str] = []
    while chars and len(" ".join(before)) < chars // 2:
        before.append(rng.choice(EVERYDAY[lang]))
    while chars and len(" ".join(after)) < chars // 2:
        after.append(rng.choice(EVERYDAY[lang]))
    return " ".join([*before, text, *after])


def main(argv: list[str] | None = None) -> int:
    """Print the three figures."""
    from bot.conversation.crisis import Classifier, e5_embedder, load_model, side_by_side, use_embedder
    from bot.conversation.documents import crisis_chunks
    from bot.conversation.safety import signals_crisis

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40, help="crises the patterns miss, sampled from train")
    parser.add_argument("--sessions", type=int, default=70, help="LoCoMo sessions read as documents")
    args = parser.parse_args(argv)
    model, e5, rng = load_model(), e5_embedder(), random.Random(51)
    classifier = Classifier(model, None, e5.name)

    def embed(texts: list[str]) -> np.ndarray:  # the vectors the weights read, side by side (not cached: timed)
        return side_by_side(model, {f: e5.embed(texts, "query") if f == "e5" else use_embedder().embed(texts)
                                    for f in model.features})

    missed = [r for r in train_rows() if r.label == 1 and not signals_crisis(r.text)]
    rows = rng.sample(missed, min(args.rows, len(missed)))
    print(f"1. train crises the patterns miss: {len(rows)} sampled of {len(missed)}")
    for chars in CONTEXTS:
        texts = [around(r.text, r.lang, chars, rng) for r in rows]
        found = sum(classifier.says(v) for v in embed(texts))
        print(f"   with {chars:>5} characters of everyday sentences around: the classifier finds {found}"
              f" of {len(rows)}")

    if not LOCOMO.exists():
        print(f"2. {LOCOMO} is not there: no false-alarm figure")
        return 0
    sessions = [
        "\n\n".join(f"{turn['speaker']}: {turn['text']}" for turn in session)
        for conversation in json.loads(LOCOMO.read_text(encoding="utf-8"))
        for name, session in conversation["conversation"].items()
        if name.startswith("session_") and isinstance(session, list)][: args.sessions]
    pieces = [(at, piece) for at, text in enumerate(sessions) for piece in crisis_chunks(text)]
    started = time.perf_counter()
    vectors = embed([piece for _, piece in pieces])
    seconds = time.perf_counter() - started
    by_classifier = {at for (at, _), v in zip(pieces, vectors) if classifier.says(v)}
    by_patterns = {at for at, piece in pieces if signals_crisis(piece)}
    flagged_pieces = sum(classifier.says(v) for v in vectors)
    print(f"2. LoCoMo sessions as documents: {len(sessions)} documents, {sum(map(len, sessions)):,} characters, "
          f"{len(pieces)} pieces")
    print(f"   pieces flagged: classifier {flagged_pieces}, patterns {sum(signals_crisis(p) for _, p in pieces)}; "
          f"documents flagged: classifier {len(by_classifier)}, patterns {len(by_patterns)}, "
          f"either {len(by_classifier | by_patterns)}")
    print(f"3. the classifier's time: {seconds:.1f} s for {len(pieces)} pieces, {seconds / len(pieces):.2f} s a piece")
    return 0


if __name__ == "__main__":
    sys.exit(main())
