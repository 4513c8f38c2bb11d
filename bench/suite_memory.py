"""The peak memory of a command and everything it starts: the test run's workers, PostgreSQL, Synapse, Chromium.

    python bench/suite_memory.py -- make test

Every half second it adds up the memory of the command's whole process tree, twice: the resident set sizes (pages
shared between processes counted in each) and the proportional set sizes (a shared page split among its sharers,
the fairer sum). It prints both peaks, the wall time and the command's exit code, and exits with that code.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass, field

import psutil


@dataclass
class Peak:
    """The largest sums seen, in bytes, and the processes alive at the PSS peak (PSS in bytes, command line)."""

    rss: int = 0
    pss: int = 0
    processes: list[tuple[int, str]] = field(default_factory=list)


def tree_memory(root: psutil.Process) -> tuple[int, int, list[tuple[int, str]]]:
    """RSS and PSS summed over root and its descendants, and each process's PSS and command line."""
    rss = pss = 0
    each: list[tuple[int, str]] = []
    try:
        members = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0, []
    for proc in members:
        try:
            info = proc.memory_full_info()
            command = " ".join(proc.cmdline())[:100]
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue  # ended between the listing and the reading
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
        each.append((getattr(info, "pss", info.rss), command))
    return rss, pss, each


def watch(command: list[str], every: float = 0.5) -> tuple[int, float, Peak]:
    """Run command, sampling its tree's memory; its exit code, the wall seconds and the peaks."""
    started = time.monotonic()
    child = subprocess.Popen(command)
    root, peak = psutil.Process(child.pid), Peak()
    while child.poll() is None:
        rss, pss, each = tree_memory(root)
        peak.rss = max(peak.rss, rss)
        if pss > peak.pss:
            peak.pss, peak.processes = pss, each
        time.sleep(every)
    return child.returncode, time.monotonic() - started, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name a command after --")
    code, seconds, peak = watch(command)
    mib = 1024 * 1024
    print(f"\nwall {seconds / 60:.1f} min, exit {code}; peak memory of the process tree: "
          f"PSS {peak.pss / mib:.0f} MiB ({len(peak.processes)} processes), RSS sum {peak.rss / mib:.0f} MiB",
          file=sys.stderr)
    for size, command in sorted(peak.processes, reverse=True):
        print(f"  {size / mib:6.0f} MiB  {command}", file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":
    main()
