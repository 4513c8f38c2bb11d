"""Files only mnemo's user may read (0600, in 0700 folders), each replaced in one step: the Matrix login, kept voice
notes."""
from __future__ import annotations

import os
from pathlib import Path

from memory import PRIVATE_DIR, PRIVATE_FILE


def write_private(path: Path, content: str | bytes) -> None:
    """Write a file only its owner may read, replacing the old one in one step (no half-written file is left)."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def private_folders(root: Path, folder: Path) -> None:
    """Make `folder` and the folders between it and `root` (which may exist), each only its owner may enter."""
    for part in (*reversed(folder.relative_to(root).parents), folder.relative_to(root)):
        (root / part).mkdir(mode=PRIVATE_DIR, exist_ok=True)
