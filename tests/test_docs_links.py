"""Every relative link and #anchor in README.md and docs/*.md leads somewhere: the file exists, and the heading an
anchor names is in it (GitHub's anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")


def prose(text: str) -> list[str]:
    """The lines outside fenced code blocks, with inline code spans blanked (a link in code is no link)."""
    lines, fence = [], ""
    for line in text.splitlines():
        opened = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence:
            if opened and opened.group(1).startswith(fence):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        lines.append(re.sub(r"(`+).*?\1", "``", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()  # a link counts by its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose(page.read_text(encoding="utf-8")):
        heading = HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer("\n".join(prose(page.read_text(encoding="utf-8"))))]  # text may wrap


def test_the_slugs_follow_githubs_rules() -> None:
    assert slug("Pairing: letting someone new in") == "pairing-letting-someone-new-in"
    assert slug("From SQLite to PostgreSQL") == "from-sqlite-to-postgresql"
    assert slug("Crisis detection (issue 38)") == "crisis-detection-issue-38"
    assert slug("Preview and --since") == "preview-and---since"
    assert slug("`/why` and the `MNEMO_TIMEZONE`") == "why-and-the-mnemo_timezone"
    assert slug("Prüfen, größer") == "prüfen-größer"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:, file: – not ours to check
            continue
        path, _, anchor = target.partition("#")
        goal = (page.parent / path).resolve() if path else page
        if not goal.exists():
            broken.append(f"{target}: no such file")
        elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
            broken.append(f"{target}: no heading #{anchor} in {goal.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_pages_link_to_each_other() -> None:
    front = (ROOT / "README.md").read_text(encoding="utf-8")
    for guide in ("user-guide.md", "operator-guide.md", "developer-guide.md"):
        assert f"(docs/{guide})" in front, guide
        assert "(../README.md)" in (ROOT / "docs" / guide).read_text(encoding="utf-8"), guide
