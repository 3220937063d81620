"""Driving `modelplane` as a user does: a fleet directory, a command line, its output.

`modelplane(...)` runs the installed command's entry point in this process (the
real APIs, functions and admission; `--in-process` keeps it fast) and returns its
exit status, standard output and standard error. `Fleet` is a copy of example
directories that a test edits the way a user edits YAML in a Git repository.

Every `render` reads its XRDs and Compositions and builds its admission before it
renders; `shared_setup` keeps what each command built for the next command of the
process that reads the same files (see its docstring).
"""

from __future__ import annotations

import contextlib
import io
import marshal
import shutil
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from unittest import mock

from modelplane_cli import yamlio
from modelplane_cli.main import main
from modelplane_cli.render import (
    Apis,
    FunctionRegistry,
    RenderResult,
    SchemaAdmission,
    apiservers,
    render,
)
from modelplane_cli.schema import SchemaRegistry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Obj = dict[str, Any]


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str

    @property
    def objects(self) -> list[Obj]:
        """The objects of `out`, parsed once; each call gets its own copy."""
        return marshal.loads(self._parsed)

    @cached_property
    def _parsed(self) -> bytes:
        # marshal copies plain YAML data (dicts, lists, str, int, float, bool, None)
        # exactly, in C: a copy costs a small part of parsing the text again.
        return marshal.dumps([o for o in yamlio.load_all(self.out) if o is not None])

    def one(self, kind: str, name: str) -> Obj:
        (found,) = [o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name]
        return found

    def condition(self, kind: str, name: str, type_: str) -> Obj:
        (found,) = [c for c in self.one(kind, name)["status"]["conditions"] if c["type"] == type_]
        return found

    def errors(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.startswith("error: ")]


_Files = tuple[tuple[str, bytes], ...]
_APIS: dict[tuple[str, _Files], Apis] = {}
_ADMISSIONS: dict[_Files, SchemaAdmission] = {}
_DEFINITIONS: dict[tuple[str, bytes], SchemaRegistry] = {}
_LOAD_APIS = Apis.load
_ADMISSION_FROM = SchemaAdmission.from_files
_DEFINITIONS_IN = apiservers._definitions_in  # pyright: ignore[reportPrivateUsage]
# The installed functions, loaded once: each runner's memos and caches are keyed by
# the exact bytes or values they were computed from (modelplane.xfn.memo), so what a
# render reuses from an earlier one is what it would compute.
REGISTRY = FunctionRegistry()


def _files(paths: Sequence[Path]) -> _Files:
    return tuple((str(p), p.read_bytes()) for p in paths)


def shared_apis(directory: Path) -> Apis:
    """`Apis.load(directory)`, loaded once per process for the same files."""
    if not directory.is_dir():
        return _LOAD_APIS(directory)  # its error, as the command reports it
    files = sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml"))
    key = (str(directory), _files(files))
    if key not in _APIS:
        _APIS[key] = _LOAD_APIS(directory)
    return _APIS[key]


def shared_admission(xrd_files: Sequence[Path]) -> SchemaAdmission:
    """`SchemaAdmission.from_files(xrd_files)`, built once per process for the same files."""
    key = _files(xrd_files)
    if key not in _ADMISSIONS:
        _ADMISSIONS[key] = _ADMISSION_FROM(xrd_files)
    return _ADMISSIONS[key]


def shared_definitions(file: Path) -> SchemaRegistry:
    """The CRDs of one file as a command's workload API servers read them, read once
    per process for the same path and bytes (the upstream CRDs are megabytes of YAML;
    KServe's alone took a command 0.5-0.75 CPU seconds to read again)."""
    key = (str(file), file.read_bytes())
    if key not in _DEFINITIONS:
        _DEFINITIONS[key] = _DEFINITIONS_IN(file)
    return _DEFINITIONS[key]


@contextlib.contextmanager
def shared_setup() -> Generator[None]:
    """While open, a `render` command reads its XRDs and Compositions and builds its
    admission as `shared_apis` and `shared_admission` do (what an earlier command or
    the session's `Renderer` built from the same paths and bytes), reads the CRDs its
    workload API servers check manifests against as `shared_definitions` does, and
    calls the installed functions through `REGISTRY`.

    All three are deterministic functions of those files, and the render engine only
    reads them. The admission keeps, as within one command, its answer per exact body
    (`SchemaAdmission`), so a later command admitting a body admitted before gets the
    answer the schema gave it then. A CRD's `Schema` compiles its nodes and rules
    once, on first use, from the definition alone. What else a command builds (its
    workload API servers and what they hold, the documents it reads) is its own, as
    in a process of its own; a load that fails is not kept and fails again. A test
    that patches product code for part of a session must patch what no memo keeps (a
    decision, not a reading)."""
    with (
        mock.patch.object(Apis, "load", staticmethod(shared_apis)),
        mock.patch.object(SchemaAdmission, "from_files", staticmethod(shared_admission)),
        mock.patch.object(apiservers, "_definitions_in", shared_definitions),
        mock.patch("modelplane_cli.render_command.FunctionRegistry", lambda: REGISTRY),
    ):
        yield


def modelplane(*argv: str | Path, in_process: bool = True) -> Run:
    args = [str(a) for a in argv]
    if in_process and args[:1] == ["render"]:
        args.insert(1, "--in-process")
    out, err = io.StringIO(), io.StringIO()
    with shared_setup(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Run(code, out.getvalue(), err.getvalue())


def rendered(*argv: str | Path) -> tuple[Run, RenderResult]:
    """`modelplane render ...`, and the render result the command wrote its output from:
    one render for a test that reads both a format's bytes and the world behind them."""
    results: list[RenderResult] = []

    def recording(*args: Any, **kwargs: Any) -> RenderResult:
        results.append(render(*args, **kwargs))
        return results[-1]

    with mock.patch("modelplane_cli.render_command.render", recording):
        run = modelplane(*argv)
    (result,) = results
    return run, result


NOT_CONVERGED = "error: the world did not converge within "


def rounds(*argv: str | Path, count: int) -> list[Run]:
    """`modelplane render ... --rounds N` for N in 1..count: the world after each round.

    The engine stops at the round that changes nothing, whatever `--rounds` allows, and
    is deterministic, so once `--rounds k` converged every later N renders what it did:
    those renders are not run again, except the last, which must then equal it."""
    runs: list[Run] = []
    for n in range(1, count + 1):
        runs.append(modelplane(*argv, "--rounds", str(n)))
        if NOT_CONVERGED not in runs[-1].err:
            break
    if len(runs) < count:
        last = modelplane(*argv, "--rounds", str(count))
        assert last == runs[-1], f"--rounds {len(runs)} converged, --rounds {count} differs"
        runs.extend([last] * (count - len(runs)))
    return runs


class Fleet:
    """A copy of example directories under `root`, edited through `edit`."""

    def __init__(self, root: Path, *examples: str) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        for name in examples:
            source = EXAMPLES / name
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, root / name)
            else:
                shutil.copy(source, root / name)

    def path(self, relative: str) -> Path:
        return self.root / relative

    def text(self, relative: str) -> str:
        return self.path(relative).read_text()

    def replace(self, relative: str, old: str, new: str, count: int = 1) -> None:
        """Edit a file by text, as a user does; the old text must be there."""
        text = self.text(relative)
        assert old in text, f"{old!r} is not in {relative}"
        self.path(relative).write_text(text.replace(old, new, count))

    def edit(self, relative: str, kind: str, name: str, change: Callable[[Obj], None]) -> None:
        """Edit one document of a file as data, writing the file back as YAML."""
        docs = [d for d in yamlio.load_all(self.text(relative)) if d is not None]
        (target,) = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
        change(target)
        self.path(relative).write_text(yamlio.dump_all(docs))


def preview(world: Path, repo: Fleet, *flags: str) -> Run:
    """A CI preview of the repository over its running world, as a diff."""
    return modelplane("render", "--observed", world, repo.root, "-o", "diff", *flags)
