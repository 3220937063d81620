"""YAML the way Kubernetes reads and writes it: the one loader of the whole CLI.

- Unquoted timestamps stay strings. PyYAML's safe loader turns them into datetime
  objects; Kubernetes keeps them as strings (creationTimestamp, lastTransitionTime),
  and so must we, or they could not travel through a protobuf Struct to a function.
- A key repeated in one mapping is an error, as kubectl reports it (`key "x" already
  set in map`): a concatenated file must not silently lose a class or a cluster.
- Every document is returned with the 1-based line it starts on, and every error
  names the line, so a user can find what is wrong.

Resolving is done in Python for either parser, so the C one (libyaml, several times
faster on the multi-megabyte CRDs) behaves the same. Construction is a walk of its
own for plain documents and PyYAML's constructor for the rest (`_construct`).

Writing is `yaml_writer`'s: PyYAML's safe dumper's bytes, several times faster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml import composer, constructor, nodes, parser, reader, resolver, scanner

from modelplane_cli import yaml_writer

_MERGE_TAG = "tag:yaml.org,2002:merge"
# libyaml parses several times faster (the CRDs are megabytes of YAML), but its
# composer recurses in C and crashes the process on a deeply nested document;
# Python's composer over libyaml's events raises RecursionError instead.
try:
    from yaml._yaml import CParser as _CParser  # pyright: ignore[reportMissingModuleSource]
except ImportError:  # PyYAML built without libyaml
    _CParser = None


class _PythonEvents(parser.Parser, scanner.Scanner, reader.Reader):
    """PyYAML's own event parser, where libyaml is not available."""

    def __init__(self, text: str) -> None:
        reader.Reader.__init__(self, text)
        scanner.Scanner.__init__(self)
        parser.Parser.__init__(self)


_Events: Any = _CParser or _PythonEvents


class YAMLError(ValueError):
    """A YAML stream that does not load; the message names where."""


class _Strict(constructor.SafeConstructor):
    """Construction shared by both loaders: a key repeated in a mapping is an error."""

    def construct_mapping(self, node: nodes.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[tuple[str, str]] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, nodes.ScalarNode):
                continue
            ident = (key_node.tag, str(key_node.value))
            if ident in seen:
                raise constructor.ConstructorError(
                    None,
                    None,
                    f"key {_go_quote(str(key_node.value))} already set in map",
                    key_node.start_mark,
                )
            seen.add(ident)
        return super().construct_mapping(node, deep=deep)  # pyright: ignore[reportUnknownMemberType]


class _KubeResolver(resolver.Resolver):
    """YAML 1.1 resolution without timestamps, which stay strings."""

    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML's own class attribute
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self) -> None:
        super().__init__()
        self._resolved: dict[tuple[Any, Any, Any], str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # Asked once per node of the stream. Without path resolvers a node's tag
        # depends on its kind, value and implicit flags alone (BaseResolver.resolve).
        key = (kind, value, implicit)
        found = self._resolved.get(key)
        if found is None:
            found = super().resolve(kind, value, implicit)  # pyright: ignore[reportUnknownMemberType]
            self._resolved[key] = found
        return found


class _KubeLoader(composer.Composer, _Events, _Strict, _KubeResolver):
    """Python's composer over libyaml's events: safe at any depth."""

    def __init__(self, text: str) -> None:
        _Events.__init__(self, text)
        composer.Composer.__init__(self)
        _Strict.__init__(self)
        _KubeResolver.__init__(self)


class _FastLoader(_Events, _Strict, _KubeResolver):
    """libyaml's composer too, for a document too shallow to exhaust the C stack."""

    def __init__(self, text: str) -> None:
        _Events.__init__(self, text)
        _Strict.__init__(self)
        _KubeResolver.__init__(self)


# Nesting is bounded by the flow brackets plus the longest line (block levels
# need indentation, compact sequences two columns a level). Well under this, the
# C composer's recursion is safe; a document over it is read by Python's.
_SHALLOW = 5000


def _loader(text: str) -> Any:
    if _CParser is None:
        return _KubeLoader(text)
    brackets = text.count("[") + text.count("{")
    if brackets < _SHALLOW and brackets + max(map(len, text.splitlines()), default=0) < _SHALLOW:
        return _FastLoader(text)
    return _KubeLoader(text)


@dataclass(frozen=True)
class Loaded:
    """One document of a stream: its value, the line it starts on, and where its
    top-level `items` start when it has a list of them (a `v1 List`)."""

    value: Any
    line: int
    item_lines: tuple[int, ...] = ()


def load_documents(text: str, origin: str) -> list[Loaded]:
    """Every document of a YAML stream, empty ones as None; YAMLError names origin:line."""
    loader = _loader(text)
    found: list[Loaded] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            value = _construct(loader, node)
            found.append(Loaded(value, _line(node), _item_lines(node)))
    except yaml.MarkedYAMLError as exc:
        raise YAMLError(_describe(exc, origin)) from None
    except yaml.YAMLError as exc:
        raise YAMLError(f"{origin}: {exc}") from None
    except RecursionError:
        raise YAMLError(f"{origin}: nested too deeply") from None
    finally:
        loader.dispose()
    return found


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ, _MERGE = _TAG + "str", _TAG + "map", _TAG + "seq", _MERGE_TAG


class _Irregular(Exception):  # noqa: N818 - a signal to construct the usual way
    """A node `_construct` leaves to the constructor (or its error) to handle."""


def _construct(loader: Any, root: nodes.Node | None) -> Any:
    """The document's value, as `construct_document` gives it, built in one walk.

    PyYAML's constructor builds every mapping and list through a generator and a
    queue (so a recursive alias can refer to its own value), several times slower
    than this walk of the plain documents Kubernetes objects are: mappings, lists,
    and scalars of the core tags. Anything else (an alias, a merge key, another
    tag, a non-scalar key) and any mapping whose keys build equal (a repeated key) is
    constructed by the constructor, which raises the error with the message the
    tests check.
    """
    scalars = {
        _STR: loader.construct_yaml_str,
        _TAG + "null": loader.construct_yaml_null,
        _TAG + "bool": loader.construct_yaml_bool,
        _TAG + "int": loader.construct_yaml_int,
        _TAG + "float": loader.construct_yaml_float,
    }
    seen: set[int] = set()

    def build(node: Any) -> Any:
        kind = type(node)
        tag = node.tag
        if kind is nodes.ScalarNode:
            if tag == _STR:
                return node.value
            if tag in scalars:
                return scalars[tag](node)
            raise _Irregular
        count = len(seen)
        seen.add(id(node))
        if len(seen) == count:
            raise _Irregular  # an alias: the constructor shares one value
        if kind is nodes.SequenceNode and tag == _SEQ:
            return [build(item) for item in node.value]
        if kind is not nodes.MappingNode or tag != _MAP:
            raise _Irregular
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if type(key_node) is not nodes.ScalarNode or key_node.tag == _MERGE:
                raise _Irregular
            mapping[build(key_node)] = build(value_node)
        if len(mapping) != len(node.value):
            # Two keys built equal: a repeated key, which `_Strict` (the one check)
            # refuses, or two spellings of one value (`1`, `0x1`), which it keeps.
            raise _Irregular
        return mapping

    try:
        return build(root)
    except (_Irregular, RecursionError):
        return loader.construct_document(root)


def field_line(text: str, document: int, path: Sequence[str | int]) -> int | None:
    """The 1-based line of the field at `path` (mapping keys and list indexes) in the
    `document`-th document of a stream, counted as `load_documents` counts them; None
    when the stream does not hold it. A mapping key's line is the key's own.

    The stream is composed again, without construction: loading keeps no marks,
    since a message needs them for a field or two and loading is a render's hot path.
    """
    loader = _loader(text)
    try:
        node: nodes.Node | None = None
        for _ in range(document + 1):
            if not loader.check_node():
                return None
            node = loader.get_node()
    except (yaml.YAMLError, RecursionError):
        return None
    finally:
        loader.dispose()
    line: int | None = None
    for part in path:
        found = _child(node, part)
        if found is None:
            return None
        line, node = found
    return line


def _child(node: nodes.Node | None, part: str | int) -> tuple[int, nodes.Node] | None:
    """The line and node of one step of a field path below `node`, None when absent."""
    if isinstance(part, int):
        if isinstance(node, nodes.SequenceNode) and 0 <= part < len(node.value):
            item: nodes.Node = node.value[part]
            return _line(item), item
        return None
    if isinstance(node, nodes.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, nodes.ScalarNode) and key_node.value == part:
                return _line(key_node), value_node
    return None


def load_all(text: str, origin: str = "<input>") -> list[Any]:
    """Every document's value, empty documents included as None."""
    return [doc.value for doc in load_documents(text, origin)]


def load_one(text: str, origin: str = "<input>") -> Any:
    """The value of a stream holding one document (None when empty)."""
    docs = [doc for doc in load_documents(text, origin) if doc.value is not None]
    if len(docs) > 1:
        raise YAMLError(f"{origin}:{docs[1].line}: expected one document, found {len(docs)}")
    return docs[0].value if docs else None


def load_file(path: Path) -> list[Any]:
    """Every non-empty document of a file; YAMLError (also for an unreadable file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise YAMLError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from None
    return [value for value in load_all(text, str(path)) if value is not None]


_DUMP_OPTIONS: dict[str, Any] = {
    "sort_keys": True,
    "default_flow_style": False,
    "allow_unicode": True,
    "width": yaml_writer.WIDTH,
}


def _write(documents: list[dict[str, Any]], *, explicit_start: bool) -> str:
    # A writer per call: its cache of scalar texts lives as long as the text it
    # writes, and no state is shared between threads or calls.
    return yaml_writer.Writer().write(documents, explicit_start=explicit_start)


def dump_all(objects: Iterable[Mapping[str, Any]]) -> str:
    """A multi-document YAML stream with sorted keys and no line folding."""
    documents = [dict(obj) for obj in objects]
    try:
        return _write(documents, explicit_start=True)
    except (yaml_writer.UnsupportedError, TypeError, RecursionError):
        return yaml.dump_all(
            documents, Dumper=yaml.SafeDumper, explicit_start=True, **_DUMP_OPTIONS
        )


def dump(obj: Mapping[str, Any]) -> str:
    """One object as a YAML document, keys sorted, without the leading `---`."""
    document = dict(obj)
    try:
        return _write([document], explicit_start=False)
    except (yaml_writer.UnsupportedError, TypeError, RecursionError):
        return yaml.dump(document, Dumper=yaml.SafeDumper, **_DUMP_OPTIONS)


def _line(node: nodes.Node | None) -> int:
    return node.start_mark.line + 1 if node is not None else 1


def _item_lines(node: nodes.Node | None) -> tuple[int, ...]:
    if not isinstance(node, nodes.MappingNode):
        return ()
    for key_node, value_node in node.value:
        if (
            isinstance(key_node, nodes.ScalarNode)
            and key_node.value == "items"
            and isinstance(value_node, nodes.SequenceNode)
        ):
            return tuple(_line(item) for item in value_node.value)
    return ()


def _describe(exc: yaml.MarkedYAMLError, origin: str) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"{origin}:{mark.line + 1}" if mark is not None else origin
    parts = [p for p in (exc.context, exc.problem) if p]
    return f"{where}: {', '.join(parts) or 'invalid YAML'}"


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
