"""Reading a large ChatGPT export: time and peak memory of the streaming reader, without any model.

Generates an export of 2,000 conversations (16 messages each, one edited branch, a hidden system message) as
conversations.json and as the zip, in a temp dir, then reads each in a fresh process through read_history and the
preview's tally. Peak RSS is the process's VmHWM (ru_maxrss would carry the parent's peak over the exec). Prints
measured figures only.

    .venv/bin/python bench/history_read.py [--conversations 2000] [--messages 16]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.history_exports import chatgpt_file  # noqa: E402

PEAK = """
import re
def peak_mb():
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) / 1024
"""
READ = PEAK + """
import json, sys, time
from bot.history.preview import tally
from bot.history.readers import read_history
started = time.perf_counter()
preview = tally(read_history(sys.argv[1]), daily_budget=int(sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - started, "peak_rss_mb": peak_mb(),
    "conversations": preview.conversations, "person": preview.person_messages, "other": preview.other_messages,
    "calls": preview.calls, "tokens": preview.tokens}))
"""
BASELINE = PEAK + """
import json
import bot.history.preview
print(json.dumps({"peak_rss_mb": peak_mb()}))
"""


def run(code: str, *args: str) -> dict[str, float]:
    """Run Python code in a fresh process and read the JSON line it prints."""
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Generate, read, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=16)
    parser.add_argument("--budget", type=int, default=500_000, help="daily background tokens for the share")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        plain = chatgpt_file(Path(tmp) / "conversations.json", args.conversations, args.messages)
        zipped = chatgpt_file(Path(tmp) / "export.zip", args.conversations, args.messages, zipped=True)
        made = time.perf_counter() - started
        print(f"generated {args.conversations:,} conversations x {args.messages} messages in {made:.1f} s: "
              f"conversations.json {plain.stat().st_size / 2**20:.1f} MB, zip {zipped.stat().st_size / 2**20:.1f} MB")
        print(f"baseline (python + imports, nothing read): peak RSS {run(BASELINE)['peak_rss_mb']:.0f} MB")
        for label, path in (("conversations.json", plain), ("export.zip", zipped)):
            r = run(READ, str(path), str(args.budget))
            print(f"{label:19} read+tally {r['seconds']:.2f} s ({plain.stat().st_size / 2**20 / r['seconds']:.0f} MB "
                  f"of JSON/s), peak RSS {r['peak_rss_mb']:.0f} MB; {r['conversations']:,.0f} conversations, "
                  f"{r['person']:,.0f} + {r['other']:,.0f} messages, estimate {r['calls']:,.0f} calls, "
                  f"{r['tokens']:,.0f} tokens ({100 * r['tokens'] / args.budget:.0f}% of {args.budget:,}/day)")


if __name__ == "__main__":
    main()
