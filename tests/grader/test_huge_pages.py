"""The warm worker backs its heap with transparent huge pages before its first fork (fewer page-table entries
for fork to copy and for a child's exit to free), and a child that writes into those pages is still charged
4 KiB a write, not 2 MiB: a job's memory cap means what it meant before."""

from __future__ import annotations

import json

import pytest

from tests.helpers.warm_process import run_in_warm_process

SCRIPT = r"""
import ctypes, json, os
shell = inside.shell.make_shell()
inside.guard._snapshot()
inside.child.settle()
HUGE = inside.confine.HUGE

def rollup(key):
    for line in open("/proc/self/smaps_rollup"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)

# The huge pages of the heap: the regions smaps shows with AnonHugePages, each 2 MiB page's start.
starts, region = [], None
for line in open("/proc/self/smaps"):
    head = line.split()
    if "-" in head[0] and not head[0].endswith(":"):
        region = [int(x, 16) for x in head[0].split("-")] if "w" in head[1] else None
    elif head[0] == "AnonHugePages:" and int(head[1]) and region:
        lo = (region[0] + HUGE - 1) & ~(HUGE - 1)
        starts += range(lo, region[1] - HUGE + 1, HUGE)
huge = rollup("AnonHugePages")
r, fd = os.pipe()
pid = os.fork()
if pid == 0:
    before = rollup("Private_Dirty")
    touched = 0
    for start in starts[:64]:  # one byte in each of 64 huge pages, written back as it was: a copy-on-write
        b = ctypes.c_char.from_address(start + 4096 * 7)
        try:
            b.value = b.value
        except Exception:
            continue
        touched += 1
    os.write(fd, json.dumps({"touched": touched, "copied": rollup("Private_Dirty") - before}).encode())
    os._exit(0)
os.close(fd)
child = json.loads(os.read(r, 1 << 16))
os.waitpid(pid, 0)
print(json.dumps({"huge": huge, "anon": rollup("Anonymous"), **child}))
"""


def _collapse_supported() -> bool:
    """MADV_COLLAPSE (Linux 6.1) on a fresh anonymous 4 MiB: what the worker relies on, asked of this kernel."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    m = mmap.mmap(-1, 8 * 2**20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.write(b"x" * len(m))
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        lo = (base + 2**21 - 1) & ~(2**21 - 1)
        return libc.madvise(lo, 2**21, 25) == 0
    finally:
        m.close()


def test_the_warm_heap_is_huge_and_a_child_still_copies_only_what_it_writes(tmp_path):
    if not _collapse_supported():
        pytest.skip("this kernel cannot collapse memory into huge pages (MADV_COLLAPSE, Linux 6.1): "
                    "the worker then keeps ordinary pages")
    done = run_in_warm_process(SCRIPT, tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["huge"] >= got["anon"] // 2, got  # most of the warm process's anonymous memory
    assert got["touched"] >= 32, got
    # Each write copies one 4 KiB page (the kernel splits the huge page's entry): far below 2 MiB a write.
    assert got["copied"] < got["touched"] * 64 * 1024, got
