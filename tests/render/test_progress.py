"""Progress on standard error: on a terminal only, after a delay, never with --quiet."""

from __future__ import annotations

import io
import threading

import pytest

from modelplane_cli.render import progress


class Terminal(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.written = threading.Event()

    def isatty(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.written.set()
        return super().write(s)


def test_the_line_says_what_and_how_long() -> None:
    assert progress.line("rendering 12 composites", 7.9) == (
        "modelplane render: rendering 12 composites... 7 s"
    )


def test_nothing_is_shown_off_a_terminal_or_when_quiet() -> None:
    pipe = io.StringIO()
    terminal = Terminal()

    with progress.Progress(pipe, "x") as piped, progress.Progress(terminal, "x", quiet=True) as q:
        assert not piped.enabled
        assert not q.enabled

    assert (pipe.getvalue(), terminal.getvalue()) == ("", "")


def test_a_terminal_sees_the_line_and_then_it_is_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    terminal = Terminal()

    with progress.Progress(terminal, "rendering 3 composites") as shown:
        assert shown.enabled
        assert terminal.written.wait(30)

    text = terminal.getvalue()
    assert text.startswith("\rmodelplane render: rendering 3 composites... ")
    shown_lines = [part for part in text.split("\r") if part.strip()]
    width = max(len(part) for part in shown_lines)
    assert text.endswith("\r" + " " * width + "\r")
