"""celpy's CEL parser, its LALR tables built once per machine rather than once per process.

Lark analyses celpy's grammar into LALR tables in about a quarter of a second of
CPU, in every process that parses CEL (the CLI, and each function server and
worker). Lark can save a built parser and load it back (`Lark.save`/`Lark.load`,
what its own `cache=True` does) in a twentieth of that. The saved parser lives in
the user's cache directory (`$XDG_CACHE_HOME/modelplane`, else `~/.cache/modelplane`),
under a name that is a hash of everything that decides the tables: celpy's grammar
text and version, Lark's version and the Python version. A parser that is missing,
unreadable or does not load is built as celpy builds it; a cache that cannot be
written is not an error. The file is written whole (a temporary file, then renamed),
so a concurrent reader sees the old file or the new one.

Lark's own `cache=True` is not used: it writes to the shared temporary directory,
where anyone can plant the pickle it then loads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import lark
from celpy import celparser
from celpy.celparser import CELParser

_GRAMMAR = Path(celparser.__file__).parent / "cel.lark"


def parser() -> CELParser:
    """celpy's parser singleton, its Lark parser loaded from the cache when it can be."""
    if CELParser.CEL_PARSER is None:
        CELParser.CEL_PARSER = _cached()
    return CELParser()


def cache_path() -> Path | None:
    """Where the built parser is kept; None when no cache directory can be named."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    try:
        # A function pod may run as a user with no HOME and no passwd entry, where
        # Path.home() raises: it then builds its parser as celpy does, uncached.
        root = Path(base) if base else Path.home() / ".cache"
        grammar = _GRAMMAR.read_bytes()
        versions = f"{metadata.version('cel-python')}/{lark.__version__}/{sys.version_info[:2]}"
    except (OSError, RuntimeError, metadata.PackageNotFoundError):
        return None
    digest = hashlib.sha256(grammar + b"\0" + versions.encode()).hexdigest()[:32]
    return root / "modelplane" / f"cel-parser-{digest}.pickle"


def _cached() -> lark.Lark | None:
    path = cache_path()
    if path is not None:
        try:
            with path.open("rb") as f:
                # The saved options name celpy's lexer callback and tree class.
                return lark.Lark.load(f)
        except Exception:  # a missing, unreadable or stale cache is built anew
            pass
    # celpy's own construction: the same grammar and options as ever.
    CELParser()
    built = CELParser.CEL_PARSER
    if path is not None and built is not None:
        _save(built, path)
    return built


def _save(built: lark.Lark, path: Path) -> None:
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=".cel-parser-")
        temporary = Path(name)
        try:
            with os.fdopen(handle, "wb") as f:
                built.save(f)
            temporary.replace(path)
        finally:
            temporary.unlink(missing_ok=True)
