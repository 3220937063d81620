"""Reading the input: YAML or JSON files and directories, or standard input.

Every problem of every file is collected before anything is rendered, each named
by file and 1-based line, so one run shows a user all that is wrong. Directories
are read recursively in path order, skipping hidden files and directories (`.git`,
`.github`, editor state), as kubectl's recursive read of manifests would be expected to.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from modelplane_cli import yamlio
from modelplane_cli.render.objects import SERVER_ONLY_METADATA
from modelplane_cli.render.shapes import shape_error
from modelplane_cli.render.world import Obj, ObjectKey

STDIN = "-"
_SUFFIXES = (".yaml", ".yml", ".json")
# Events this engine wrote are a record of one run, not state: a round-tripped
# document set regenerates them instead of carrying stale copies forward.
RENDER_COMPONENT = "modelplane-render"


class InputError(Exception):
    """Input paths or documents that cannot be used: every problem found, one per line."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class Place:
    """Where a document sits in the text it was read from: the stream's name and text,
    the document's index among the stream's documents and, for an item of a `v1 List`,
    the item's index. Enough to find a field's line when a message names one
    (`field_source`), at no cost to reading."""

    origin: str
    text: str = dataclasses.field(repr=False)
    index: int
    item: int | None = None

    def field_source(self, path: str) -> str | None:
        """`file:line` of the field at a dotted `path` (`spec.a[2].b`), None when the
        document does not spell it out (a default, a merge key)."""
        parts: list[str | int] = [] if self.item is None else ["items", self.item]
        for match in _PATH_STEP.finditer(path):
            name, index = match.group(1, 2)
            parts.append(name if index is None else int(index))
        line = yamlio.field_line(self.text, self.index, parts)
        return f"{self.origin}:{line}" if line is not None else None


# One step of a dotted field path: a name, or a list index (`[2]`).
_PATH_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Document:
    """One input object; `source` is `file:line`. `observed` marks the running world
    (`--observed`, or a file that carries observed state) as opposed to desired sources.
    `deleted` marks a desired deletion (`prune`): the object leaves the world. `place`
    finds the line of one of its fields (`field_source`)."""

    source: str
    obj: Obj
    observed: bool = False
    deleted: bool = False
    place: Place | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def key(self) -> ObjectKey:
        return ObjectKey.of(self.obj)

    def field_source(self, path: str) -> str:
        """`file:line` of the field at `path`, or of the document where it has none."""
        found = self.place.field_source(path) if self.place is not None else None
        return found or self.source


class Sources(dict[ObjectKey, str]):
    """Where each object was read (`file:line` of its document), and the documents,
    so that a message naming one field can cite that field's line (`field`)."""

    def __init__(self, documents: Mapping[ObjectKey, Document]) -> None:
        super().__init__((key, doc.source) for key, doc in documents.items())
        self._documents = dict(documents)

    def field(self, key: ObjectKey, *paths: str) -> str | None:
        """`file:line` of the first of `key`'s fields at `paths` its document spells out,
        else of its document (None when `key` was not read)."""
        doc = self._documents.get(key)
        place = doc.place if doc is not None else None
        if place is not None:
            for path in paths:
                found = place.field_source(path)
                if found is not None:
                    return found
        return self.get(key)


def read_documents(
    paths: Sequence[str], stdin: TextIO | None = None, *, observed: bool | None = None
) -> list[Document]:
    """Every object in `paths` (files, directories searched recursively, or "-").

    `observed` forces every document to be the running world (True) or desired
    sources (False); None decides per file: a file any of whose documents carries a
    status or server-set metadata is observed world.
    """
    documents: list[Document] = []
    problems: list[str] = []
    for raw in paths or [STDIN]:
        if raw == STDIN:
            _read_stream((stdin or sys.stdin).read(), "<stdin>", observed, documents, problems)
            continue
        path = Path(raw)
        if path.is_dir():
            files = _files_under(path)
            if not files:
                problems.append(f"{raw}: no .yaml, .yml or .json file under this directory")
                continue
        elif path.is_file():
            files = [path]
        else:
            problems.append(f"{raw}: no such file or directory")
            continue
        for file in files:
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{file}: {getattr(exc, 'strerror', None) or exc}")
                continue
            _read_stream(text, str(file), observed, documents, problems)
    if problems:
        raise InputError(problems)
    return documents


def parse_stream(text: str, origin: str, *, observed: bool | None = None) -> list[Document]:
    """The objects of one YAML stream; `kind: List` documents are expanded."""
    documents: list[Document] = []
    problems: list[str] = []
    _read_stream(text, origin, observed, documents, problems)
    if problems:
        raise InputError(problems)
    return documents


def _files_under(directory: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found.extend(
            Path(root) / name
            for name in files
            if not name.startswith(".") and name.endswith(_SUFFIXES)
        )
    return sorted(found)


def _read_stream(
    text: str,
    origin: str,
    observed: bool | None,
    documents: list[Document],
    problems: list[str],
) -> None:
    try:
        loaded = yamlio.load_documents(text, origin)
    except yamlio.YAMLError as exc:
        problems.append(str(exc))
        return
    found: list[Document] = []
    for number, doc in enumerate(loaded):
        raw = doc.value
        if raw is None:
            continue
        source = f"{origin}:{doc.line}"
        if isinstance(raw, Mapping) and raw.get("kind") == "List" and "items" in raw:
            items: Any = raw.get("items") or []
            if not isinstance(items, list):
                problems.append(f"{source}: items of a List must be a list")
                continue
            for index, item in enumerate(items):
                line = doc.item_lines[index] if index < len(doc.item_lines) else doc.line
                place = Place(origin, text, number, index)
                _add(item, f"{origin}:{line}", place, found, problems)
        else:
            _add(raw, source, Place(origin, text, number), found, problems)
    found = [d for d in found if not _is_render_event(d.obj)]
    is_observed = observed if observed is not None else any(_carries_state(d.obj) for d in found)
    documents.extend(Document(d.source, d.obj, is_observed, place=d.place) for d in found)


def _add(raw: Any, source: str, place: Place, found: list[Document], problems: list[str]) -> None:
    problem = _document_problem(raw)
    if problem is not None:
        problems.append(f"{source}: {problem}")
    else:
        obj = {str(k): v for k, v in raw.items()}
        found.append(Document(source=source, obj=obj, place=place))


def _document_problem(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        return f"a document must be a mapping, not {type(raw).__name__}"
    obj: Obj = {str(k): v for k, v in raw.items()}
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj[field]:
            return f"{field} is required"
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
        return "metadata.name is required"
    return _json_problem(obj, "") or shape_error(obj)


def _carries_state(obj: Mapping[str, Any]) -> bool:
    metadata: Mapping[str, Any] = obj.get("metadata") or {}
    return "status" in obj or any(metadata.get(k) for k in SERVER_ONLY_METADATA)


def _json_problem(value: Any, path: str) -> str | None:
    """Why `value` is not JSON a Kubernetes object can hold, or None when it is."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path or '<root>'}: key {key!r} must be a string"
            problem = _json_problem(item, f"{path}.{key}" if path else key)
            if problem is not None:
                return problem
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            problem = _json_problem(item, f"{path}[{index}]")
            if problem is not None:
                return problem
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path}: {value} is not a JSON number"
    if value is None or isinstance(value, str | int | float):
        return None
    return f"{path}: a {type(value).__name__} value is not JSON"


def _is_render_event(obj: Mapping[str, Any]) -> bool:
    source = obj.get("source")
    return (
        obj.get("apiVersion") == "v1"
        and obj.get("kind") == "Event"
        and isinstance(source, Mapping)
        and source.get("component") == RENDER_COMPONENT
    )
