"""YAML text written directly, byte for byte what PyYAML's safe dumper writes.

`yamlio.dump_all` and `yamlio.dump` write block-style YAML with sorted keys, unicode
as is and lines never folded below 65536 columns. PyYAML gets there by building a
node graph, resolving every scalar's tag twice, and running its emitter's state
machine one event at a time; for render's output (megabytes of dicts, lists and
strings) that was most of the time `-o yaml` took.

This writer walks the documents once and writes each line itself. The block layout
(`key: value`, a list under a key at the key's own indentation, `- key: value` for a
mapping in a list, `{}` and `[]` for empty ones) is the emitter's, reproduced here.
How a scalar is written (plain, quoted, escaped, folded, tagged) is not: a string is
written plain here only when a conservative pattern proves PyYAML would write it plain
too; every other scalar is written by PyYAML's own emitter code, set to the state it
would be in at that place, and cached per distinct value (per value and position for
text spanning several lines). Whatever this writer does not handle (a dict or list met
twice in a document, which PyYAML writes as an anchor and alias; a key PyYAML writes
in the `? key` form; a value of another type) makes it raise `UnsupportedError`, and the
caller then lets PyYAML write the whole stream.
"""

from __future__ import annotations

import re
from typing import Any, cast

import yaml
from yaml import emitter, events, nodes

WIDTH = 1 << 16
_STR = "tag:yaml.org,2002:str"
# A string of these characters is written plain by PyYAML in block context: it starts
# with no indicator (`-?:,[]{}#&*!|>'"%@\``, `---`, `...`) and no space, has no line
# break, special or non-ASCII character, no `: ` or ` #`, and does not end in a space
# or a colon. Whether its plain form reads back as a string is then the resolver's
# question, asked only for the first characters a resolver is registered for.
_PLAIN = re.compile(r"[A-Za-z0-9_/$(^](?:[!-9;-~]|:(?=[!-~])| +(?=[!\"$-~]))*")
# Plain text longer than this could, at a deep enough indentation, reach the width
# where PyYAML folds it at a space; such text is written by PyYAML in place.
_SHORT = 4096
# The characters PyYAML's emitter starts a new line at.
_BREAKS = re.compile("[\n\x85\u2028\u2029]")
_TWICE = "a dict or list met twice in one document"


class UnsupportedError(Exception):
    """A value this writer does not write the way PyYAML would; PyYAML must."""


class _Buffer:
    """The stream PyYAML's emitter writes one scalar into."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, data: str) -> None:
        self.parts.append(data)

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts.clear()
        return text


class _ScalarEmitter(emitter.Emitter):
    """PyYAML's emitter, used for one scalar at a time in the state the emitter it
    replaces would be in there: the same style choice, quoting, escaping and folding."""

    def __init__(self) -> None:
        self.buffer = _Buffer()
        super().__init__(self.buffer, allow_unicode=True, width=WIDTH)
        # What a document start sets (a tag's length counts in a key's).
        self.tag_prefixes = dict(self.DEFAULT_TAG_PREFIXES)

    def scalar(
        self, node: nodes.ScalarNode, implicit: tuple[bool, bool], where: tuple[int, int, bool]
    ) -> str:
        indent, column, key = where
        self.buffer.parts.clear()  # nothing of a scalar that raised
        self.event = events.ScalarEvent(None, node.tag, implicit, node.value)
        # expect_scalar indents a scalar one step deeper than its collection.
        self.indent = indent + self.best_indent
        self.column = column
        self.whitespace = key  # a key follows an indentation, a value a `:` or `-`
        self.indention = key
        self.flow_level = 0
        self.root_context = False
        self.simple_key_context = key
        self.analysis = None
        self.style = None
        self.prepared_tag = None
        if key and not self.check_simple_key():
            raise UnsupportedError("a key PyYAML writes as `? key`")
        self.process_tag()
        self.process_scalar()
        return self.buffer.take()


class _Scalars:
    """The text of each scalar, as PyYAML writes it after `key:` or `-` (with its
    leading space) or as a key (without), cached per distinct value."""

    def __init__(self) -> None:
        self._emitter = _ScalarEmitter()
        self._representer = yaml.SafeDumper(None)  # pyright: ignore[reportArgumentType]
        self.values: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        self.others: dict[tuple[type, str], str] = {}
        self._placed: dict[tuple[str, int, int], str] = {}

    def _implicit(self, node: nodes.ScalarNode) -> tuple[bool, bool]:
        # What PyYAML's serializer passes its emitter: whether the tag is the one the
        # plain form, or a quoted form, would be read back with.
        resolve = self._representer.resolve  # pyright: ignore[reportUnknownMemberType]
        return (
            node.tag == resolve(nodes.ScalarNode, node.value, (True, False)),
            node.tag == resolve(nodes.ScalarNode, node.value, (False, True)),
        )

    def _plain(self, text: str) -> bool:
        if len(text) > _SHORT or not _PLAIN.fullmatch(text):
            return False
        resolvers = self._representer.yaml_implicit_resolvers  # pyright: ignore[reportUnknownMemberType]
        if text[0] not in resolvers and None not in resolvers:
            return True  # no resolver could read it as anything but a string
        return self._implicit(nodes.ScalarNode(_STR, text))[0]

    def key(self, text: str) -> str:
        written = self.keys.get(text)
        if written is None:
            if self._plain(text) and len(text) < 100:
                written = text
            else:
                node = nodes.ScalarNode(_STR, text)
                written = self._emitter.scalar(node, self._implicit(node), (0, 0, True))
            self.keys[text] = written
        return written

    def value(self, text: str, indent: int, column: int) -> str:
        """A string value that is not in `values`: its text at this place."""
        if self._plain(text):
            self.values[text] = written = " " + text
            return written
        place = (text, indent, column)
        written = self._placed.get(place)
        if written is None:
            node = nodes.ScalarNode(_STR, text)
            written = self._emitter.scalar(node, self._implicit(node), (indent, column, False))
            if len(written) <= _SHORT and not _BREAKS.search(written):
                # On one line and short, it is the same text at any place.
                self.values[text] = written
            else:
                self._placed[place] = written
        return written

    def other(self, value: Any, indent: int, column: int) -> str:
        """An int, float, bool or None, as SafeRepresenter represents it."""
        kind = type(value)
        if kind not in (int, float, bool, type(None)):
            raise UnsupportedError(f"a {kind.__name__} value")
        cache = (kind, repr(value))
        written = self.others.get(cache)
        if written is None:
            node = cast(nodes.ScalarNode, self._representer.represent_data(value))  # pyright: ignore[reportUnknownMemberType]
            written = self._emitter.scalar(node, self._implicit(node), (indent, column, False))
            self.others[cache] = written
        return written


class Writer:
    """Writes documents as `yamlio.dump_all` (explicit start) or `yamlio.dump` do."""

    def __init__(self) -> None:
        self._scalars = _Scalars()
        self._pads: list[str] = []

    def _pad(self, indent: int) -> str:
        """A line break and `indent` spaces (`indent` + 2 is then known too)."""
        pads = self._pads
        if indent + 2 >= len(pads):
            pads.extend("\n" + " " * n for n in range(len(pads), 2 * indent + 4))
        return pads[indent]

    def write(self, documents: list[dict[str, Any]], *, explicit_start: bool) -> str:
        out: list[str] = []
        for document in documents:
            if type(document) is not dict:
                raise UnsupportedError("a document that is not a dict")
            seen: set[int] = {id(document)}
            if not document:
                out.append("--- {}\n" if explicit_start else "{}\n")
                continue
            if explicit_start:
                out.append("---")
                self._mapping(document, 0, "\n", out, seen)
            else:
                self._mapping(document, 0, "", out, seen)
            out.append("\n")
        return "".join(out)

    def _mapping(
        self, mapping: dict[Any, Any], indent: int, first: str, out: list[str], seen: set[int]
    ) -> None:
        """A non-empty mapping whose keys start at column `indent`; `first` goes
        before its first key (a line break, or the space after a `-`)."""
        scalars = self._scalars
        keys = scalars.keys
        values = scalars.values
        pad = self._pad(indent)
        pads = self._pads
        append = out.append
        inner = indent + 2
        prefix = first
        for key in sorted(mapping):
            if type(key) is not str:
                raise UnsupportedError("a key that is not a string")
            written = keys.get(key) or scalars.key(key)
            value = mapping[key]
            kind = type(value)
            if kind is str:
                text = values.get(value) or scalars.value(value, indent, indent + len(written) + 1)
                append(f"{prefix}{written}:{text}")
            elif kind is dict or kind is list:
                _meet(value, seen)
                if not value:
                    append(f"{prefix}{written}: {{}}" if kind is dict else f"{prefix}{written}: []")
                elif kind is dict:
                    append(f"{prefix}{written}:")
                    self._mapping(value, inner, pads[inner], out, seen)
                else:
                    # A list under a key is not indented (PyYAML's indentless sequence).
                    append(f"{prefix}{written}:")
                    self._sequence(value, indent, pad, out, seen)
            else:
                text = scalars.other(value, indent, indent + len(written) + 1)
                append(f"{prefix}{written}:{text}")
            prefix = pad

    def _sequence(
        self, sequence: list[Any], indent: int, first: str, out: list[str], seen: set[int]
    ) -> None:
        """A non-empty sequence whose `-` are at column `indent`."""
        scalars = self._scalars
        values = scalars.values
        pad = self._pad(indent)
        append = out.append
        inner = indent + 2
        prefix = first
        for value in sequence:
            kind = type(value)
            if kind is str:
                text = values.get(value) or scalars.value(value, indent, indent + 1)
                append(f"{prefix}-{text}")
            elif kind is dict or kind is list:
                _meet(value, seen)
                if not value:
                    append(f"{prefix}- {{}}" if kind is dict else f"{prefix}- []")
                elif kind is dict:
                    append(f"{prefix}-")
                    self._mapping(value, inner, " ", out, seen)
                else:
                    append(f"{prefix}-")
                    self._sequence(value, inner, " ", out, seen)
            else:
                append(f"{prefix}-{scalars.other(value, indent, indent + 1)}")
            prefix = pad


def _meet(container: object, seen: set[int]) -> None:
    """Note a dict or list as written. PyYAML writes one met twice in a document as an
    anchor and an alias; such a document is left to it."""
    count = len(seen)
    seen.add(id(container))
    if len(seen) == count:
        raise UnsupportedError(_TWICE)
