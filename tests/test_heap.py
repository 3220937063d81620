"""The `modelplane` command keeps the memory it frees instead of handing it back at once.

Each check runs in a fresh interpreter: the setting is the process allocator's and
lasts, so the test worker's own allocator is left alone.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from modelplane_cli import heap, main

needs_glibc = pytest.mark.skipif(
    not hasattr(os, "confstr") or not os.confstr("CS_GNU_LIBC_VERSION"),
    reason="the allocator's thresholds are glibc's",
)

# Frees a 16 MiB block and prints how much of it glibc still holds at its heap's
# top (`mallinfo2().keepcost`): with glibc's defaults the block is a mapping of
# its own, unmapped on free, so nearly nothing is kept.
_KEPT_AFTER_FREE = """
import ctypes, sys
from modelplane_cli.heap import keep_freed_memory
if sys.argv[1] == "keep":
    print(keep_freed_memory(), file=sys.stderr)

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Mallinfo2
block = libc.malloc(16 << 20)
ctypes.memset(block, 1, 16 << 20)
libc.free(block)
print(libc.mallinfo2().keepcost)
"""


def kept_after_free(mode: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-c", _KEPT_AFTER_FREE, mode],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout), done.stderr.strip()


@needs_glibc
def test_freed_memory_stays_in_the_heap_once_kept() -> None:
    kept, accepted = kept_after_free("keep")
    assert accepted == "True"
    assert kept >= 16 << 20


@needs_glibc
def test_glibc_defaults_hand_a_large_block_back() -> None:
    # The contrast that makes the test above mean something.
    kept, _ = kept_after_free("default")
    assert kept < 16 << 20


def test_nothing_changes_without_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "confstr", lambda name: None)
    assert heap.keep_freed_memory() is False


def test_the_command_keeps_freed_memory_and_a_caller_of_main_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(heap, "keep_freed_memory", lambda: calls.append("kept") or True)
    monkeypatch.setattr(sys, "argv", ["modelplane", "--version"])

    with pytest.raises(SystemExit) as exited:
        main.console()
    assert exited.value.code == 0
    assert calls == ["kept"]

    calls.clear()
    with pytest.raises(SystemExit):
        main.main(["--version"])
    assert calls == []
