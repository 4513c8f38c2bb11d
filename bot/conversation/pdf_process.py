"""A PDF's text read in a process of its own, which the document's time limit ends (MNEMO_DOCUMENT_MAX_SECONDS).

pypdf cannot be stopped: a thread left reading after the limit kept a core busy (a crafted PDF, for minutes) while
the person had long been told it was too slow. A process is killed at the limit. It gets the PDF's bytes on stdin
and writes one JSON line: {"text", "pages"} or {"reason", "detail", "values"} (a DocumentError, rebuilt here).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path

from bot.errors import DocumentError

log = logging.getLogger(__name__)
ROOT = str(Path(__file__).resolve().parents[2])  # where `bot` is found, for the child as for this process


async def pdf_text(data: bytes, max_pages: int, seconds: float) -> tuple[str, int]:
    """The PDF's text and page count, read in a child process within `seconds`; DocumentError for one that is not
    read (too slow: the process is killed)."""
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH", "")) if p)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", __name__, str(max_pages), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": path})
    try:
        out, err = await asyncio.wait_for(child.communicate(data), seconds)
    except TimeoutError as exc:
        shown = f"{seconds:g}"
        raise DocumentError("document_too_slow", f"not read within {shown} s", seconds=shown) from exc
    finally:  # at the limit, and when the turn is cancelled: nothing reads on
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            await child.wait()
    try:
        answer = json.loads(out)
    except ValueError as exc:  # it died (out of memory, a crash in a C part): the file is not read
        log.warning("the PDF reader process ended with %s: %s", child.returncode, err.decode(errors="replace")[-500:])
        raise DocumentError("document_damaged", f"the reader process ended with {child.returncode}") from exc
    if "reason" in answer:
        raise DocumentError(answer["reason"], answer["detail"], **answer["values"])
    return str(answer["text"]), int(answer["pages"])


def main() -> None:
    """Read the PDF on stdin and write its text (or why not) as one JSON line."""
    from bot.conversation.documents import pdf_text_here

    try:
        text, pages = pdf_text_here(sys.stdin.buffer.read(), int(sys.argv[1]))
        answer: dict[str, object] = {"text": text, "pages": pages}
    except DocumentError as exc:
        answer = {"reason": exc.reason, "detail": str(exc).partition(": ")[2], "values": exc.values}
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))


if __name__ == "__main__":
    main()
