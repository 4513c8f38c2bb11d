"""What the outside view reads and writes: transcripts (read-only), quotes checked against them, report files."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path

from bot.errors import ConfigError
from memory import Message

# The form the analyst is asked to use for every quote: «words» (YYYY-MM-DD).
QUOTE_RE = re.compile(r"«([^«»]{1,2000})»\s*\((\d{4}-\d{2}-\d{2})\)")
REPORT_DIR = "reports"
REPORT_NAME_RE = re.compile(r"analysis-\d{8}-\d{6}(?:-\d+)?")
VERIFIED, NOT_FOUND = "✓ verified", "✗ not found"


def read_questions(path: Path) -> list[str]:
    """Questions from a file, one a line; blank lines and lines starting with # are skipped."""
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except OSError as exc:
        raise ConfigError(f"Cannot read the questions file {path}: {exc.strerror or exc}.") from exc
    questions = [line for line in lines if line and not line.startswith("#")]
    if not questions:
        raise ConfigError(f"{path} holds no questions (one a line).")
    return questions



@dataclass(frozen=True)
class QuoteCheck:
    """One quote of a report and where the transcript has it."""

    quote: str
    date: str
    match: str  # "exact", "normalized" or "" (not found)
    found_dates: tuple[str, ...] = ()

    @property
    def verified(self) -> bool:
        """Whether the quote occurs in the transcript."""
        return bool(self.match)

    @property
    def mark(self) -> str:
        """The annotation written after the quote."""
        if not self.verified:
            return NOT_FOUND
        if self.date in self.found_dates:
            return VERIFIED
        return f"{VERIFIED}, dated {', '.join(self.found_dates[:3])}"


def normalize(text: str) -> str:
    """Fold case and collapse every run of whitespace to one space."""
    return " ".join(text.casefold().split())


def extract_quotes(report: str) -> list[tuple[str, str]]:
    """Every «quote» (YYYY-MM-DD) in a report, as (quote, date), in order."""
    return [(m.group(1), m.group(2)) for m in QUOTE_RE.finditer(report)]


def check_quote(quote: str, date: str, messages: Sequence[Message], zone: tzinfo) -> QuoteCheck:
    """Look for a quote in the messages, exactly or whitespace/case-normalized, and note the dates it has."""
    wanted, exact_dates, loose_dates = normalize(quote), [], []
    if not wanted:
        return QuoteCheck(quote, date, "")
    for m in messages:
        day = f"{m.created_at.astimezone(zone):%Y-%m-%d}"
        if quote.strip() in m.text:
            exact_dates.append(day)
        elif wanted in normalize(m.text):
            loose_dates.append(day)
    dates = tuple(dict.fromkeys(exact_dates + loose_dates))
    match = "exact" if exact_dates else "normalized" if loose_dates else ""
    return QuoteCheck(quote, date, match, dates)


def verify_quotes(report: str, messages: Sequence[Message], zone: tzinfo) -> list[QuoteCheck]:
    """Check every quote of a report against the transcript."""
    return [check_quote(q, d, messages, zone) for q, d in extract_quotes(report)]


def annotate(report: str, messages: Sequence[Message], zone: tzinfo) -> tuple[str, list[QuoteCheck]]:
    """Write ✓ verified or ✗ not found after each quote of a report; return the text and the checks."""
    checks: list[QuoteCheck] = []

    def mark(found: re.Match[str]) -> str:
        check = check_quote(found.group(1), found.group(2), messages, zone)
        checks.append(check)
        return f"{found.group(0)} [{check.mark}]"

    return QUOTE_RE.sub(mark, report), checks


def quote_summary(checks: Sequence[QuoteCheck]) -> str:
    """'6 of 7 quotes verified, 1 not found'."""
    verified = sum(1 for c in checks if c.verified)
    return f"{verified} of {len(checks)} quotes verified, {len(checks) - verified} not found"


def demote_headings(text: str, levels: int) -> str:
    """Push the analyst's Markdown headings down, so they sit under the report's own."""
    return re.sub(r"(?m)^(#{1,6}) ", lambda m: "#" * min(6, len(m.group(1)) + levels) + " ", text)


@dataclass(frozen=True)
class ReportHeader:
    """What a report says about itself before the findings."""

    created: datetime
    analyst: str
    mode: str
    selection: str
    size: str
    questions: str = ""
    quotes: str = ""
    usage: str = ""


def render_report(header: ReportHeader, final: str, parts: Sequence[str]) -> str:
    """The report file: a header block, the final report, then the part reports."""
    lines = [
        f"# Outside view {header.created:%Y-%m-%d %H:%M}",
        "",
        f"- Date: {header.created:%Y-%m-%d %H:%M:%S %Z}".rstrip(),
        f"- Analyst: {header.analyst}",
        f"- Mode: {header.mode}",
        f"- Selection: {header.selection}",
        f"- Size: {header.size}",
    ]
    lines += [f"- Questions: {header.questions}"] if header.questions else []
    lines += [f"- Quotes: {header.quotes}"] if header.quotes else []
    lines += [f"- Tokens used: {header.usage}"] if header.usage else []
    lines += ["", "## Final report", "", demote_headings(final.strip(), 2), ""]
    if len(parts) > 1:
        lines += ["## Part reports", ""]
        for number, part in enumerate(parts, 1):
            lines += [f"### Part {number} of {len(parts)}", "", demote_headings(part.strip(), 3), ""]
    return "\n".join(lines)


def report_dir(data_dir: Path) -> Path:
    """Where reports are kept."""
    return data_dir / REPORT_DIR


def save_report(data_dir: Path, text: str, created: datetime) -> Path:
    """Write a report as reports/analysis-YYYYMMDD-HHMMSS.md, never overwriting an earlier one."""
    folder = report_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"analysis-{created:%Y%m%d-%H%M%S}"
    for n in range(1, 100):
        path = folder / (f"{stem}.md" if n == 1 else f"{stem}-{n}.md")
        try:
            with path.open("x", encoding="utf-8") as f:
                f.write(text)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"too many reports named {stem} in {folder}")


@dataclass(frozen=True)
class ReportInfo:
    """A saved report as the list shows it."""

    name: str
    path: Path
    size: int
    summary: dict[str, str]


def _summary(path: Path) -> dict[str, str]:
    """The '- Key: value' lines of a report's header block."""
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                break
            if line.startswith("- ") and ": " in line:
                key, value = line[2:].split(": ", 1)
                out[key] = value.strip()
    return out


def list_reports(data_dir: Path) -> list[ReportInfo]:
    """Saved reports, oldest first."""
    folder = report_dir(data_dir)
    if not folder.is_dir():
        return []
    paths = sorted(p for p in folder.glob("analysis-*.md") if REPORT_NAME_RE.fullmatch(p.stem))
    return [ReportInfo(p.stem, p, p.stat().st_size, _summary(p)) for p in paths]


def delete_reports_about(data_dir: Path, user_id: str) -> list[Path]:
    """Delete the saved reports whose selection is this user's transcripts (after their /deleteme)."""
    gone = []
    for info in list_reports(data_dir):
        if info.summary.get("Selection", "").startswith(f"user {user_id};"):
            info.path.unlink(missing_ok=True)
            gone.append(info.path)
    return gone


def report_path(data_dir: Path, name: str) -> Path | None:
    """The file of a report named like `analysis-20250101-120000` (with or without .md), if it exists."""
    stem = name.removesuffix(".md")
    if not REPORT_NAME_RE.fullmatch(stem):
        return None
    path = report_dir(data_dir) / f"{stem}.md"
    return path if path.is_file() else None


def delete_report(data_dir: Path, name: str) -> bool:
    """Delete one saved report; False when there is none of that name."""
    path = report_path(data_dir, name)
    if path is None:
        return False
    path.unlink()
    return True


def reports_command(data_dir: Path, delete: str | None = None) -> int:
    """`mnemo analyse --list`, or `--delete NAME`: print the saved reports, or delete one."""
    if delete:
        if not delete_report(data_dir, delete):
            print(f"no report named {delete!r}; see mnemo analyse --list")
            return 1
        print(f"deleted {delete}")
        return 0
    for info in list_reports(data_dir):
        s = info.summary
        print(f"{info.name}  {s.get('Mode', '?')}  {s.get('Analyst', '?')}  {s.get('Selection', '')}")
    return 0
