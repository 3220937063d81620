"""`-o yaml` and `-o json`: every object of the final world, then the last round's events.

Both are sorted by apiVersion, kind, namespace and name, with sorted keys, so the
same input always gives the same bytes. JSON is a `v1 List` (what `kubectl get -o
json` prints), YAML a multi-document stream; `modelplane render` reads both back.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # pyright: ignore[reportUnknownVariableType]
from typing import Any

from modelplane_cli import yamlio
from modelplane_cli.render.result import RenderResult
from modelplane_cli.render.world import Obj, ObjectKey

_INDENT = "  "
# The stdlib's encoder is pure Python once it indents (its C encoder does not); the
# walk below writes the same text, its strings escaped by the stdlib's C function.
_encode: Any = encode_basestring
_FLOATS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def documents(result: RenderResult) -> list[Obj]:
    return sorted([*result.objects, *result.events], key=ObjectKey.of)


def to_yaml(result: RenderResult) -> str:
    docs = documents(result)
    return yamlio.dump_all(docs) if docs else ""


def to_json(result: RenderResult) -> str:
    listing = {"apiVersion": "v1", "kind": "List", "items": documents(result)}
    return json_text(listing)


def json_text(value: Any) -> str:
    """`json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)` and a newline."""
    out: list[str] = []
    try:
        _value(value, "\n", out)
    except (_OtherType, TypeError, RecursionError):  # TypeError: keys that do not sort
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    out.append("\n")
    return "".join(out)


class _OtherType(Exception):  # noqa: N818 - a signal to let the stdlib write it
    """A value the stdlib writes (or refuses) in a way not reproduced here."""


def _value(value: Any, pad: str, out: list[str]) -> None:
    """`value` after `pad` (a line break and the indentation of its line)."""
    kind = type(value)
    if kind is str:
        out.append(_encode(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = pad + _INDENT
        separator = "{" + inner
        for key in sorted(value):
            if type(key) is not str:
                raise _OtherType
            item = value[key]
            if type(item) is str:
                out.append(f"{separator}{_encode(key)}: {_encode(item)}")
            else:
                out.append(f"{separator}{_encode(key)}: ")
                _value(item, inner, out)
            separator = "," + inner
        out.append(pad + "}")
    elif kind is list:
        if not value:
            out.append("[]")
            return
        inner = pad + _INDENT
        separator = "[" + inner
        for item in value:
            out.append(separator)
            _value(item, inner, out)
            separator = "," + inner
        out.append(pad + "]")
    else:
        out.append(_scalar(value))


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        text = float.__repr__(value)
        return _FLOATS.get(text, text)
    raise _OtherType
