"""Keeps what each student leaves in nbgrader's inbound within the class's limits (run as root by the hub).

Students may write into inbound directly, not only through `nbgrader submit` (which refuses a folder over the limit
with a message): a flood of gigabytes there would fill the disk every home and the exchange share, and stay. This
machine's file systems may offer no quotas, so every few seconds this looks at each entry and removes:

- an entry larger than a submission may be (SUBMISSION_MAX_MB), or holding more files than one may (SUBMISSION_FILES):
  `nbgrader submit` would have refused it, so it holds nothing a student earned;
- while a student's entries together pass INBOUND_QUOTA_MB, the largest of them (the newest first among equals).

Sizes count what a file takes on disk or its length, whichever is larger (collect copies the length). Removals are
logged on standard output (the hub's log). Started by jupyterhub_config.py as a managed service: the hub restarts it
if it stops. `inbound_guard.py --once` checks once (the class test and an instructor's cron can use that).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

MIB = 2**20


@dataclass
class Entry:
    path: Path
    uid: int
    size: int
    files: int
    mtime: float
    too_many: bool


def settings(env_file: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)


def measure(path: Path, st: os.stat_result, max_files: int) -> Entry:
    """Bytes and files under one inbound entry: iterative, links never followed, stopping past max_files."""
    size, files, pending = max(st.st_size, st.st_blocks * 512), 1, []
    if stat.S_ISDIR(st.st_mode):
        pending.append(path)
    while pending and files <= max_files:
        folder = pending.pop()
        try:
            found = os.scandir(folder)
        except OSError:  # unreadable, or gone while looking: counted as it stands
            continue
        with found:
            for item in found:
                files += 1
                if files > max_files:
                    break
                try:
                    ist = item.stat(follow_symlinks=False)
                except OSError:
                    continue
                size += max(ist.st_size, ist.st_blocks * 512)
                if stat.S_ISDIR(ist.st_mode):
                    pending.append(Path(item.path))
    return Entry(path, st.st_uid, size, files, st.st_mtime, files > max_files)


def remove(entry: Entry, why: str) -> None:
    # GNU rm walks without recursion limits and never follows a link, even one swapped in while it works.
    subprocess.run(["rm", "-rf", "--one-file-system", "--", str(entry.path)], check=False)
    try:
        import pwd

        owner = pwd.getpwuid(entry.uid).pw_name
    except KeyError:
        owner = str(entry.uid)
    print(f"inbound-guard: removed {entry.path.name} of {owner} ({entry.size / MIB:.0f} MiB, "
          f"{'over ' if entry.too_many else ''}{entry.files} files): {why}", flush=True)


def check(conf: dict[str, str]) -> list[str]:
    """One pass over inbound; returns the names it removed."""
    inbound = Path(conf["EXCHANGE"]) / "torchcourse" / "inbound"
    per_entry = int(conf.get("SUBMISSION_MAX_MB") or 100) * MIB
    per_student = int(conf.get("INBOUND_QUOTA_MB") or 500) * MIB
    max_files = int(conf.get("SUBMISSION_FILES") or 10_000)
    try:
        ist = os.lstat(inbound)
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(ist.st_mode):
        print(f"inbound-guard: {inbound} is not a folder; nothing checked", flush=True)
        return []
    keep = {0, ist.st_uid}  # root's and the instructor's (who may submit for a student) are left alone
    removed, by_student = [], {}
    with os.scandir(inbound) as found:
        names = [item.name for item in found]
    for name in names:
        try:
            st = os.lstat(inbound / name)
        except FileNotFoundError:
            continue
        if st.st_uid in keep:
            continue
        entry = measure(inbound / name, st, max_files)
        if entry.too_many or entry.size > per_entry:
            limit = f"over {max_files:,} files" if entry.too_many else f"over {per_entry // MIB} MiB"
            remove(entry, f"{limit}, more than a submission may hold")
            removed.append(name)
        else:
            by_student.setdefault(entry.uid, []).append(entry)
    for entries in by_student.values():
        total = sum(e.size for e in entries)
        for entry in sorted(entries, key=lambda e: (e.size, e.mtime), reverse=True):
            if total <= per_student:
                break
            remove(entry, f"the student's entries together passed {per_student // MIB} MiB")
            removed.append(entry.path.name)
            total -= entry.size
    return removed


def main() -> int:
    args = sys.argv[1:]
    once = "--once" in args
    args = [a for a in args if a != "--once"]
    if len(args) != 1:
        print("usage: inbound_guard.py [--once] PREFIX/etc/class.env", file=sys.stderr)
        return 2
    conf = settings(Path(args[0]))
    if once:
        check(conf)
        return 0
    every = float(conf.get("INBOUND_CHECK_S") or 10)
    print(f"inbound-guard: checking {conf['EXCHANGE']}/torchcourse/inbound every {every:g} s", flush=True)
    while True:
        try:
            check(conf)
        except Exception as exc:  # a student's entry changing under the walk must not stop the guard
            print(f"inbound-guard: {type(exc).__name__}: {exc}", flush=True)
        time.sleep(every)


if __name__ == "__main__":
    sys.exit(main())
