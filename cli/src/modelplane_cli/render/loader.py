"""Reading the input: YAML or JSON files and directories, or standard input."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from modelplane_cli.render import yamlio
from modelplane_cli.render.world import Obj, ObjectKey, shape_error

STDIN = "-"
_SUFFIXES = (".yaml", ".yml", ".json")
# Events this engine wrote are a record of one run, not state: a round-tripped
# document set regenerates them instead of carrying stale copies forward.
RENDER_COMPONENT = "modelplane-render"


class InputError(Exception):
    """An input path or document cannot be used."""


@dataclass(frozen=True)
class Document:
    source: str
    obj: Obj

    @property
    def key(self) -> ObjectKey:
        return ObjectKey.of(self.obj)


def read_documents(paths: Sequence[str], stdin: TextIO | None = None) -> list[Document]:
    """Every object in `paths` (files, directories searched recursively, or "-")."""
    documents: list[Document] = []
    for raw in paths or [STDIN]:
        if raw == STDIN:
            documents.extend(parse_stream((stdin or sys.stdin).read(), "<stdin>"))
            continue
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
        elif path.is_file():
            files = [path]
        else:
            raise InputError(f"{raw}: no such file or directory")
        for file in files:
            try:
                text = file.read_text()
            except OSError as exc:
                raise InputError(f"{file}: {exc.strerror}") from exc
            documents.extend(parse_stream(text, str(file)))
    seen: dict[ObjectKey, str] = {}
    for doc in documents:
        if doc.key in seen:
            raise InputError(f"{doc.source}: {doc.key} is also defined at {seen[doc.key]}")
        seen[doc.key] = doc.source
    return documents


def parse_stream(text: str, origin: str) -> list[Document]:
    """The objects of one YAML stream; `kind: List` documents are expanded."""
    try:
        raw_docs = yamlio.load_all(text)
    except yamlio.YAMLError as exc:
        raise InputError(f"{origin}: {exc}") from exc
    documents: list[Document] = []
    for index, raw in enumerate(raw_docs):
        if raw is None:
            continue
        source = f"{origin}#{index}"
        if isinstance(raw, Mapping) and raw.get("kind") == "List" and "items" in raw:
            items: Any = raw.get("items") or []
            if not isinstance(items, list):
                raise InputError(f"{source}: items of a List must be a list")
            for item_index, item in enumerate(items):
                documents.append(_document(item, f"{source}.items[{item_index}]"))
        else:
            documents.append(_document(raw, source))
    return [d for d in documents if not _is_render_event(d.obj)]


def _document(raw: Any, source: str) -> Document:
    if not isinstance(raw, dict):
        raise InputError(f"{source}: a document must be a mapping, not {type(raw).__name__}")
    obj: Obj = {str(k): v for k, v in raw.items()}
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj[field]:
            raise InputError(f"{source}: {field} is required")
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
        raise InputError(f"{source}: metadata.name is required")
    problem = _json_problem(obj, "") or shape_error(obj)
    if problem is not None:
        raise InputError(f"{source}: {problem}")
    return Document(source=source, obj=obj)


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
