"""Open an export (a file, a zip member, a folder) as a byte stream that counts, reports progress, stays bounded."""
from __future__ import annotations

import hashlib
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import ijson

from bot.errors import HistoryError

Progress = Callable[[int, int], None]  # (bytes read, bytes in total) of the JSON being read

CHUNK = 64 * 1024  # bytes handed to the JSON parser per read
MAX_ITEM_BYTES = 32 * 2**20  # one conversation (one Telegram message) may span at most this much of the file
PROGRESS_EVERY = 2**20  # call the progress hook after each MiB
MEMBERS = ("conversations.json", "result.json")  # the JSON files of the three exports, inside a zip or a folder


class Stream:
    """A readable byte stream over the export's JSON: counts what was read, calls the progress hook, and refuses to
    keep reading one item (conversation, message) past MAX_ITEM_BYTES, so a giant or endless value stays bounded."""

    def __init__(self, raw: IO[bytes], total: int, name: str, progress: Progress | None = None) -> None:
        self.raw = raw
        self.total = total
        self.name = name
        self.progress = progress
        self.pos = 0  # bytes read so far
        self._item_start = 0
        self._reported = 0

    def read(self, size: int = -1) -> bytes:
        """Read at most one chunk (never the whole file, whatever size asks for)."""
        size = CHUNK if size is None or size < 0 or size > CHUNK else size
        try:
            data = self.raw.read(size)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise HistoryError("history_zip_damaged_at", name=self.name, pos=self.pos, error=str(exc)) from exc
        except OSError as exc:
            raise HistoryError("history_unreadable", name=self.name, error=str(exc.strerror or exc)) from exc
        self.pos += len(data)
        if self.pos - self._item_start > MAX_ITEM_BYTES:
            raise HistoryError("history_item_too_large", name=self.name, mb=MAX_ITEM_BYTES // 2**20, pos=self.pos)
        at_end = size > 0 and not data  # read(0) is the parser asking for bytes or text, not the end
        if self.progress is not None and (self.pos - self._reported >= PROGRESS_EVERY or at_end):
            self._reported = self.pos
            self.progress(self.pos, self.total)
        return data

    def item_done(self) -> None:
        """Mark the end of one item: the size limit counts afresh from here."""
        self._item_start = self.pos

    def where(self) -> dict[str, int]:
        """Roughly where the reading is, as the values of an error message."""
        return {"pos": self.pos, "total": self.total, "share": 100 * self.pos // self.total if self.total else 0}


@contextmanager
def open_export(path: Path | str, progress: Progress | None = None) -> Iterator[Stream]:
    """Open the export's JSON for streaming: the file itself, conversations.json/result.json in a zip or a folder.

    Raises HistoryError when there is nothing to read: no such file, an empty file, a damaged or foreign zip.
    """
    path = Path(path)
    if path.is_dir():
        path = _member_of_folder(path)
    try:
        size = path.stat().st_size
        f = path.open("rb")
    except OSError as exc:
        raise HistoryError("history_unopenable", name=path.name, error=str(exc.strerror or exc)) from exc
    with f:
        if size == 0:
            raise HistoryError("history_empty", name=path.name)
        if f.read(4) == b"PK\x03\x04":
            f.seek(0)
            with _zip_member(f, path.name) as (member, member_size, name):
                yield Stream(member, member_size, name, progress)
            return
        f.seek(0)
        yield Stream(f, size, path.name, progress)


def _member_of_folder(folder: Path) -> Path:
    """The export's JSON in an unpacked export folder."""
    for name in MEMBERS:
        if (folder / name).is_file():
            return folder / name
    raise HistoryError("history_folder_without_export", name=folder.name)


@contextmanager
def _zip_member(f: IO[bytes], name: str) -> Iterator[tuple[IO[bytes], int, str]]:
    """The export's JSON inside a zip, opened as a stream (never unpacked to memory or disk)."""
    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise HistoryError("history_zip_damaged", name=name) from exc
    with archive:
        infos = [i for i in archive.infolist() if Path(i.filename).name in MEMBERS and not i.is_dir()]
        if not infos:
            raise HistoryError("history_zip_without_export", name=name)
        info = min(infos, key=lambda i: (i.filename.count("/"), MEMBERS.index(Path(i.filename).name)))
        try:
            member = archive.open(info)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
            raise HistoryError("history_zip_member_unreadable", name=name, member=info.filename,
                               error=str(exc)) from exc
        with member:
            yield member, info.file_size, f"{name}:{info.filename}"


def json_failure(stream: Stream, exc: Exception) -> HistoryError:
    """The short message for JSON that breaks off or is damaged, with roughly where."""
    text = str(exc.args[0] if exc.args else exc)
    if isinstance(text, bytes):  # type: ignore[unreachable]
        text = text.decode("utf-8", "replace")  # type: ignore[unreachable]
    if "premature EOF" in text:
        return HistoryError("history_cut_off", name=stream.name, **stream.where())
    if "UTF8" in text or isinstance(exc, UnicodeDecodeError):
        return HistoryError("history_not_utf8", name=stream.name, **stream.where())
    return HistoryError("history_json_damaged", name=stream.name, **stream.where())


JSON_ERRORS: tuple[type[Exception], ...] = (ijson.JSONError, UnicodeDecodeError)


def json_items(stream: Stream) -> Iterator[Any]:
    """The items of the top-level JSON array, one at a time; damaged JSON becomes a HistoryError saying where."""
    items = ijson.items(stream, "item", use_float=True)
    while True:
        try:
            raw = next(items)
        except StopIteration:
            return
        except JSON_ERRORS as exc:
            raise json_failure(stream, exc) from exc
        stream.item_done()
        yield raw


def content_hash(path: Path | str, progress: Progress | None = None) -> str:
    """The SHA-256 of the export's JSON as parsed (its values and structure, not its bytes): the same for the zip,
    the conversations.json taken out of it, its folder, or the file saved again with other spacing."""
    digest = hashlib.sha256()
    with open_export(path, progress) as stream:
        try:
            for event, value in ijson.basic_parse(stream, use_float=True):
                digest.update(f"{event}\x1f{value!r}\x1e".encode())
                if event == "end_map":  # one object read: the size limit of one item counts afresh
                    stream.item_done()
        except JSON_ERRORS as exc:
            raise json_failure(stream, exc) from exc
    return digest.hexdigest()


def head_events(stream: Stream, limit: int = 2**20) -> Iterator[tuple[str, str, Any]]:
    """The parser events of the stream's first `limit` bytes, one at a time; they end where the JSON is damaged."""
    head = _Head(stream, limit)
    try:
        yield from ijson.parse(head)
    except JSON_ERRORS:
        return


class _Head:
    """The first bytes of a stream, then its end."""

    def __init__(self, stream: Stream, limit: int) -> None:
        self.stream = stream
        self.left = limit

    def read(self, size: int = -1) -> bytes:
        """Read on until the limit."""
        if self.left <= 0:
            return b""
        data = self.stream.read(min(CHUNK if size < 0 else size, self.left))
        self.left -= len(data)
        return data
