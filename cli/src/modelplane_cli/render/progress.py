"""Progress on standard error while a render works, so a long one does not look hung.

Shown only when standard error is a terminal and the render has taken longer
than `DELAY` seconds (a quick render prints nothing extra); `--quiet` turns it
off. One line, rewritten in place, is cleared when the render ends, so what a
terminal keeps is the render's own output. A background thread writes it: the
render runs on the main thread and never waits for it.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import TextIO

DELAY = 2.0
INTERVAL = 0.5


def line(what: str, elapsed: float) -> str:
    """The progress line after `elapsed` seconds."""
    return f"modelplane render: {what}... {int(elapsed)} s"


class Progress:
    """A context manager showing `what` and the time taken, on `stream` if it is a terminal."""

    def __init__(self, stream: TextIO, what: str, *, quiet: bool = False) -> None:
        self._stream = stream
        self._what = what
        self.enabled = not quiet and _is_terminal(stream)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._width = 0

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="render-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._stream.flush()

    def _run(self) -> None:
        start = time.monotonic()
        if self._stop.wait(DELAY):
            return
        while not self._stop.is_set():
            text = line(self._what, time.monotonic() - start)
            self._stream.write("\r" + text.ljust(self._width))
            self._stream.flush()
            self._width = max(self._width, len(text))
            self._stop.wait(INTERVAL)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
