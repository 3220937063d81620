"""Every shell command in README.md and docs/ runs as written.

Each ```sh block is taken as a reader would type it, in document order, in a
scratch directory that holds what the docs assume: the checkout's `examples/`
and `.venv/` (after `make run`), a fleet repository `my-fleet/` (the example
catalog and fleet) and its running world `world.yaml`. `make render ARGS="..."`
is `.venv/bin/modelplane render ...` (its redirection is tested in
`test_make_render`); a bare `modelplane` is the installed command of the CI recipe
only, since `make run` puts nothing on PATH. A command whose comment says
`# exits N` must exit N; every other must succeed. The summary line docs/cli.md
quotes must be the first line the example render (`SUMMARY_SOURCE`) prints where a
doc runs it.

A command that is the CLI alone (`.venv/bin/modelplane ARGS`, at most with its
standard output sent to a file) runs through the entry point's `main` in this
process, with the same arguments, in the same directory, its exit status, standard
output and standard error read as a process's would be: a new interpreter for each
cost 1.5-2 CPU seconds of start-up and imports (docs/performance.md, "make test:
in-process doc commands"), and each `render` reuses the XRDs, admission and
functions an earlier command loaded from the same files (`shared_setup`). The installed entry point itself is run as a process by
the `running_world` fixture here, `test_packaging` and `test_start_up`; anything
else a shell must interpret (pipes, heredocs, `source`, `&&`) runs in bash.

What cannot run here is checked instead: a `make` target exists, an installed
path exists, `pip install` goes into a virtual environment (an externally managed
Python refuses a bare one), and commands of other tools are
left to those tools (`kubectl`, `curl`, `helm`, `crossplane`).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

from modelplane_cli.main import main
from tests.scenarios.cli import shared_setup

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
_BLOCK = re.compile(r"^```(?:sh|bash|shell)\n(.*?)^```", re.S | re.M)
_EXITS = re.compile(r"#.*\bexits (\d+)")
# The CI recipe: the one place a bare `modelplane` (installed on its own) appears.
CI_RECIPE = "modelplane render --observed world.yaml my-fleet/ -o diff --fail-on error"
# Other tools' commands, shown for what they do on a real cluster.
EXTERNAL = ("kubectl", "curl", "helm", "crossplane")
# Programs a runnable block may use besides the CLI.
_RENDER_EXAMPLE = ("render", "examples/catalog", "examples/fleet", "-o", "yaml")
SHELL_TOOLS = ("mkdir", "cp", "sed", "cat", "rm", "cd", "source")
# The render whose summary's first line docs/cli.md quotes ("Time"); getting-started
# runs it, and its output is checked against the quote there.
SUMMARY_SOURCE = ".venv/bin/modelplane render examples/catalog examples/fleet"


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    commands: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> list[Block]:
    text = doc.read_text()
    found: list[Block] = []
    for match in _BLOCK.finditer(text):
        line = text[: match.start()].count("\n") + 1
        found.append(Block(doc, line, tuple(_commands(match.group(1)))))
    return found


def _commands(body: str) -> list[str]:
    """Commands of a block: continuations joined, a heredoc kept with its command."""
    commands: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + lines[i].strip()
            i += 1
        heredoc = re.search(r"<<'?(\w+)'?", line)
        if heredoc:
            end = heredoc.group(1)
            while i < len(lines):
                line += "\n" + lines[i]
                i += 1
                if lines[i - 1].strip() == end:
                    break
        commands.append(line)
    return commands


def _program(command: str) -> str:
    return command.split(maxsplit=1)[0]


def _static_problem(command: str) -> str | None:
    """Why a command that is not run here would fail as written, if it would."""
    program = _program(command)
    if program in EXTERNAL:
        return None
    if program == "make":
        target = command.split()[1] if len(command.split()) > 1 else ""
        makefile = (ROOT / "Makefile").read_text()
        return None if re.search(rf"^{re.escape(target)}:", makefile, re.M) else "no target"
    tool = re.match(r"uv tool install (\S+)", command)
    if tool:
        return None if (ROOT / tool.group(1)).exists() else f"{tool.group(1)} does not exist"
    if re.search(r"(^|&&\s*)pip3? install", command):
        return "a bare pip install fails on an externally managed Python: use a venv's pip"
    return None


def _runs(command: str) -> bool:
    program = _program(command)
    if program == "make":
        return command.startswith("make render ")
    return program in (".venv/bin/modelplane", "modelplane", *SHELL_TOOLS)


def _unmade(command: str) -> str:
    """`make render ARGS="..."` as the command it runs, through the venv."""
    make = re.match(r'make render ARGS="([^"]*)"(.*)$', command, re.S)
    if make:
        return f".venv/bin/modelplane render {make.group(1)}{make.group(2)}"
    return command


def _as_run(command: str) -> str:
    """The command as the scratch directory's shell runs it."""
    command = _unmade(command)
    expected = _EXITS.search(command)
    if expected:
        return f"{{ {command.split('#')[0].strip()}; }} || test $? -eq {expected.group(1)}"
    return command


@pytest.fixture(scope="session")
def running_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example fleet as a fleet repository renders it: `world.yaml`."""
    root = tmp_path_factory.mktemp("world")
    world = root / "world.yaml"
    with world.open("w") as out:
        subprocess.run(
            [str(ROOT / ".venv/bin/modelplane"), *_RENDER_EXAMPLE],
            cwd=ROOT,
            stdout=out,
            check=True,
            timeout=600,
        )
    return world


def _scratch(tmp_path: Path, world: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")
    (work / ".venv").symlink_to(ROOT / ".venv")
    fleet = work / "my-fleet"
    shutil.copytree(ROOT / "examples" / "catalog", fleet / "catalog")
    shutil.copytree(ROOT / "examples" / "fleet", fleet / "fleet")
    shutil.copy(world, work / "world.yaml")
    return work


# What makes a command a shell's to run: outside quotes and the comment, any of these.
_SHELL = re.compile(r"[|&;<(){}$`*?\[\]~\\]|\n")
_QUOTED = re.compile(r"'[^']*'|\"[^\"\\$`]*\"")
_CLI = (".venv/bin/modelplane", "modelplane")


def _in_process(command: str) -> tuple[list[str], str | None] | None:
    """The CLI's arguments and the file its standard output goes to (`> FILE`), when
    `command` is the CLI alone; None when a shell must run it."""
    bare = _QUOTED.sub("''", command)
    bare = re.sub(r"(^|\s)#.*$", "", bare)
    if _SHELL.search(bare) or bare.count(">") > 1:
        return None
    words = shlex.split(command, comments=True)
    target: str | None = None
    if ">" in bare:
        if len(words) < 3 or words[-2] != ">" or not re.search(r"\s>\s+\S+\s*$", bare):
            return None
        words, target = words[:-2], words[-1]
    if not words or words[0] not in _CLI or ">" in words:
        return None
    return words[1:], target


def _main(argv: list[str], target: str | None, work: Path) -> tuple[int, str, str]:
    """`main(argv)` in `work` as a process would run it: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with (
        shared_setup(),
        contextlib.chdir(work),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)  # as the interpreter prints it on exit
        except Exception:  # an uncaught exception: a process prints it and exits 1
            traceback.print_exc()
            code = 1
    if target is None:
        return code, out.getvalue(), err.getvalue()
    (work / target).write_text(out.getvalue())
    return code, "", err.getvalue()


def _run(command: str, work: Path) -> subprocess.CompletedProcess[str]:
    direct = _in_process(_unmade(command))
    if direct is not None:
        argv, target = direct
        code, out, err = _main(argv, target, work)
        expected = _EXITS.search(command)
        if expected:  # must exit N exactly (the shell form also lets 0 through)
            want = int(expected.group(1))
            code = 0 if code == want else code or 1
        return subprocess.CompletedProcess([*_CLI[:1], *argv], code, out, err)
    env = {**os.environ, "PATH": f"{work / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", _as_run(command)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@dataclass(frozen=True)
class Ran:
    """One command of a doc: run (`done`), or checked without running (`done` None)."""

    block: Block
    command: str
    done: subprocess.CompletedProcess[str] | None


_RAN: dict[Path, list[Ran]] = {}


def ran_doc(doc: Path, scratch: Path, world: Path) -> list[Ran]:
    """Every command of `doc` in document order, in one scratch directory, run once
    per test process: the drain walkthrough's test reads the runs of its guide's
    test instead of running the guide's renders again (its block is the guide's
    first, so it ran in a directory as fresh as its own)."""
    if doc not in _RAN:
        work = _scratch(scratch, world)
        _RAN[doc] = [
            Ran(block, command, _run(command, work) if _runs(command) else None)
            for block in blocks(doc)
            for command in block.commands
        ]
    return _RAN[doc]


@pytest.mark.parametrize(
    "doc", [d for d in DOCS if blocks(d)], ids=lambda d: str(d.relative_to(ROOT))
)
def test_every_command_of_a_doc_runs_as_written(
    doc: Path, tmp_path: Path, running_world: Path
) -> None:
    if not (ROOT / ".venv/bin/modelplane").exists():
        pytest.skip("needs the workspace synced (make sync)")
    for ran in ran_doc(doc, tmp_path, running_world):
        block, command, done = ran.block, ran.command, ran.done
        program = _program(command)
        assert program != "modelplane" or command.split("#")[0].strip() == CI_RECIPE, (
            f"{block.where}: {command!r}: a bare modelplane is not on PATH after make "
            "run; write .venv/bin/modelplane or make render"
        )
        assert "race/" not in command, f"{block.where}: {command!r}: there is no race/"
        if done is None:
            problem = _static_problem(command)
            assert problem is None, f"{block.where}: {command!r}: {problem}"
            assert program in (*EXTERNAL, "make", "uv", "python3"), (
                f"{block.where}: {command!r}: neither run nor checked"
            )
            continue
        assert done.returncode == 0, f"{block.where}: {command!r}:\n{done.stderr[-2000:]}"
        if command == SUMMARY_SOURCE:
            first, quoted = done.stdout.splitlines()[0], quoted_summary()
            assert first == quoted, f"{block.where}: {first!r}; docs/cli.md quotes {quoted!r}"


def test_a_doc_runs_the_render_whose_summary_is_quoted() -> None:
    assert any(SUMMARY_SOURCE in block.commands for doc in DOCS for block in blocks(doc)), (
        f"no doc runs {SUMMARY_SOURCE!r}, so docs/cli.md's quoted summary is not checked"
    )


def quoted_summary() -> str:
    """The summary line docs/cli.md quotes (the example render's, SUMMARY_SOURCE)."""
    (quoted,) = re.findall(r"`(Rendered \d+ objects[^`]*)`", (ROOT / "docs" / "cli.md").read_text())
    return " ".join(quoted.split())


def test_the_drain_walkthrough_moves_replicas(tmp_path: Path, running_world: Path) -> None:
    if not (ROOT / ".venv/bin/modelplane").exists():
        pytest.skip("needs the workspace synced (make sync)")
    guide = ROOT / "docs" / "guides" / "capacity-drain-failover.md"
    runs = ran_doc(guide, tmp_path, running_world)
    (drain,) = {r.block for r in runs if any("examples/drain" in c for c in r.block.commands)}
    assert runs[0].block == drain, "the drain block is no longer the guide's first"
    outputs = [r.done for r in runs if r.block == drain]

    last = outputs[-1]
    assert last is not None
    assert last.returncode == 0, last.stderr
    summary = last.stdout.splitlines()[-1]
    assert summary.endswith("replicas: 0 placed, 2 moved, 0 replaced, 0 removed"), summary
