"""Bad exports get one short HistoryError (never a traceback of the parser), and reading stays bounded in memory."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from bot.errors import HistoryError
from bot.history.readers import detect_format, read_history
from bot.history.source import CHUNK
from tests.fakes.history_exports import chatgpt_file

DATA = Path(__file__).parent / "data" / "history"
ROOT = Path(__file__).parent.parent
GB2 = 2 * 2**30


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated export of about 12 MB (1,000 conversations)."""
    return chatgpt_file(tmp_path_factory.mktemp("large") / "conversations.json", 1000)


def read_all(path: Path, **kwargs: object) -> int:
    return sum(len(c.messages) for c in read_history(path, **kwargs))  # type: ignore[arg-type]


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "conversations.json").write_bytes(b"")

    with pytest.raises(HistoryError, match="^conversations.json: the file is empty$"):
        detect_format(tmp_path / "conversations.json")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="cannot be opened"):
        read_history(tmp_path / "nowhere.json")


@pytest.mark.parametrize(("content", "says"), [
    (b"Datum;Betrag\n2024-01-01;12,50\n", "is not a ChatGPT, Claude or Telegram export"),
    (b'{"version": 2, "notes": [{"text": "hallo"}]}', "is JSON, but not a ChatGPT, Claude or Telegram export"),
    (b'[{"id": 1, "text": "eine andere App"}]', "is JSON, but not a ChatGPT, Claude or Telegram export"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is not a ChatGPT, Claude or Telegram export"),
])
def test_another_format(tmp_path: Path, content: bytes, says: str) -> None:
    (tmp_path / "export.json").write_bytes(content)

    with pytest.raises(HistoryError, match=says):
        read_history(tmp_path / "export.json")


def test_a_zip_of_something_else(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "photos.zip", "w") as archive:
        archive.writestr("IMG_0001.jpg", b"\xff\xd8\xff")

    with pytest.raises(HistoryError, match="holds neither conversations.json nor result.json"):
        detect_format(tmp_path / "photos.zip")


def test_a_truncated_zip(tmp_path: Path) -> None:
    whole = chatgpt_file(tmp_path / "whole.zip", 200, zipped=True).read_bytes()
    (tmp_path / "cut.zip").write_bytes(whole[: len(whole) // 2])

    with pytest.raises(HistoryError, match=r"^cut.zip: the zip is damaged or incomplete \(was the download cut off"):
        read_history(tmp_path / "cut.zip")


def test_a_zip_damaged_inside(tmp_path: Path) -> None:
    data = bytearray(chatgpt_file(tmp_path / "whole.zip", 200, zipped=True).read_bytes())
    middle = len(data) // 2
    data[middle: middle + 64] = bytes(64)  # the directory at the end is intact, the compressed data is not
    (tmp_path / "damaged.zip").write_bytes(bytes(data))

    with pytest.raises(HistoryError, match=r"^damaged.zip:conversations.json: the (zip|JSON) is damaged at about byte"):
        read_all(tmp_path / "damaged.zip")


def test_malformed_json_in_the_middle_of_a_large_file_says_roughly_where(tmp_path: Path) -> None:
    path = chatgpt_file(tmp_path / "conversations.json", 1000, broken_at=500)
    read: list[str] = []

    with pytest.raises(HistoryError) as caught:
        for conversation in read_history(path):
            read.append(conversation.key)

    message = str(caught.value)
    assert message.startswith("conversations.json: the JSON is damaged at about byte ")
    position = int(message.split("at about byte ")[1].split(" ")[0].replace(",", ""))
    size = path.stat().st_size
    assert abs(position - size / 2) < size * 0.05  # halfway, give or take a read buffer
    assert f"of {size:,}, 50%" in message
    assert len(read) == 500  # the conversations before the damage were read


def test_json_cut_off(tmp_path: Path, large: Path) -> None:
    (tmp_path / "conversations.json").write_bytes(large.read_bytes()[:3_000_000])

    with pytest.raises(HistoryError, match=r"the file ends in the middle \(at about byte 3,000,000 of 3,000,000, "
                                           r"100%\); was it cut off\?"):
        read_all(tmp_path / "conversations.json")


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "result.json").write_bytes(json.dumps(
        {"name": "Miriam", "type": "personal_chat", "id": 1, "messages": []}).encode()[:-1] + b', "x": "\xff\xfe"}')

    with pytest.raises(HistoryError, match="not UTF-8"):
        read_all(tmp_path / "result.json", person="1")


def test_a_large_file_is_streamed_in_bounded_memory(large: Path) -> None:
    tracemalloc.start()
    try:
        messages = read_all(large)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert messages == 1000 * 16
    assert large.stat().st_size > 10 * 2**20
    assert peak < 4 * 2**20  # one conversation at a time, not the file


def sparse(path: Path, head: bytes) -> Path:
    """A 2 GB file that is `head` followed by a hole (zeros, taking no disk space)."""
    with path.open("wb") as f:
        f.write(head)
        f.truncate(GB2)
    return path


def test_a_2gb_file_of_zeros(tmp_path: Path) -> None:
    path = sparse(tmp_path / "conversations.json", b"")
    started = time.monotonic()

    with pytest.raises(HistoryError, match="is not a ChatGPT, Claude or Telegram export"):
        read_history(path)
    assert time.monotonic() - started < 5


def test_a_2gb_file_that_starts_as_an_export_fails_where_the_export_ends(tmp_path: Path) -> None:
    head = (DATA / "chatgpt" / "conversations.json").read_bytes()[:-1] + b", "
    path = sparse(tmp_path / "conversations.json", head)
    started = time.monotonic()
    tracemalloc.start()
    try:
        with pytest.raises(HistoryError) as caught:
            read_all(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    # the damage (the first zero byte) lies in the first chunk the parser asked for
    assert str(caught.value) == f"conversations.json: the JSON is damaged at about byte {CHUNK:,} of {GB2:,}, 0%"
    assert peak < 2**20 and time.monotonic() - started < 5


def test_one_giant_conversation_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """A 40 MB title: the reader stops at 32 MB of one conversation; the process stays far below 300 MB."""
    path = tmp_path / "conversations.json"
    with path.open("w") as f:
        f.write('[{"title": "')
        for _ in range(40):
            f.write("x" * 2**20)
        f.write('", "mapping": {}}]')
    # VmHWM is this process's own peak; ru_maxrss would carry the forking test process's over the exec
    code = ("import re, sys\nfrom bot.errors import HistoryError\nfrom bot.history.readers import read_history\n"
            "try:\n    list(read_history(sys.argv[1], 'chatgpt'))\nexcept HistoryError as exc:\n    print(exc)\n"
            "print(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))\n")

    done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})

    said, peak_kb = done.stdout.strip().splitlines()
    assert "one conversation or message is larger than 32 MB" in said
    assert int(peak_kb) < 200 * 1024
