"""CEL literals from celpy's tokens, with cel-go's lexical rules where celpy is looser.

celpy's own string decoder keeps unknown escapes such as `\\?` and `\\X41` as
written and drops line feeds in triple-quoted strings, so `'ac'.matches('^ab\\?c$')`
would mean something else than in Kubernetes. Strings and bytes are decoded here
as cel-go's parser (parser/unescape.go) decodes them.
"""

from __future__ import annotations

import re
from typing import Any, Final

import lark

from modelplane.cel import types as t
from modelplane.cel.errors import CelCompileError
from modelplane.cel.values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint

_CEL_FLOAT: Final = re.compile(
    r"-?(?:[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[0-9]*\.[0-9]+(?:[eE][+-]?[0-9]+)?)"
)
_SIMPLE_ESCAPES: Final = {
    "a": 0x07, "b": 0x08, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B,
    "\\": 0x5C, "'": 0x27, '"': 0x22, "`": 0x60, "?": 0x3F,
}  # fmt: skip
_HEX_DIGITS: Final = {"x": 2, "X": 2, "u": 4, "U": 8}
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_MAX_RUNE: Final = 0x10FFFF


class _LiteralError(ValueError):
    pass


def literal(token: lark.Token) -> tuple[Any, t.CelType]:
    kind, text = token.type, str(token)
    try:
        if kind == "INT_LIT":
            value = int(text, 0) if "x" in text.lower() else int(text)
            if not INT64_MIN <= value <= INT64_MAX:
                raise CelCompileError(f"invalid int literal: {text}")
            return value, t.INT
        if kind == "UINT_LIT":
            if text.startswith("-"):
                # celpy lexes "-1u" as one literal; cel-go negates a uint, which has no overload.
                raise CelCompileError("found no matching overload for '-_' applied to '(uint)'")
            body = text[:-1]
            value = int(body, 0) if "x" in body.lower() else int(body)
            if not 0 <= value <= UINT64_MAX:
                raise CelCompileError(f"invalid uint literal: {text}")
            return Uint(value), t.UINT
        if kind == "FLOAT_LIT":
            if not _CEL_FLOAT.fullmatch(text):
                # celpy also lexes "1." and "1.e3", which CEL's grammar does not allow.
                raise CelCompileError(f"Syntax error: invalid float literal {text}")
            return float(text), t.DOUBLE
        if kind in ("STRING_LIT", "MLSTRING_LIT"):
            return _unescape(text, as_bytes=False).decode("utf-8"), t.STRING
        if kind == "BYTES_LIT":
            return _unescape(text[1:], as_bytes=True), t.BYTES
        if kind == "BOOL_LIT":
            return text == "true", t.BOOL
        if kind == "NULL_LIT":
            return None, t.NULL
    except (_LiteralError, ValueError, UnicodeError) as error:
        raise CelCompileError(f"Syntax error: invalid literal {text}: {error}") from None
    raise CelCompileError(f"unsupported literal {text}")


def _unescape(text: str, as_bytes: bool) -> bytes:
    """A quoted literal's bytes: raw or escaped, single or triple quoted, newlines as \\n."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    raw = text[:1] in ("r", "R")
    if raw:
        text = text[1:]
    quote = 3 if len(text) >= 6 and text[:3] in ("'''", '"""') else 1
    if len(text) < 2 * quote or text[:quote] != text[-quote:]:
        raise _LiteralError("unterminated string")
    body = text[quote:-quote]
    if raw or "\\" not in body:
        return body.encode("utf-8")
    out = bytearray()
    position = 0
    while position < len(body):
        char = body[position]
        if char != "\\":
            out += char.encode("utf-8")
            position += 1
            continue
        position = _escape(body, position + 1, as_bytes, out)
    return bytes(out)


def _escape(body: str, position: int, as_bytes: bool, out: bytearray) -> int:
    """Decode the escape after a backslash at `position`; returns where the rest starts."""
    if position >= len(body):
        raise _LiteralError("found '\\' as last character")
    code = body[position]
    position += 1
    if code in _SIMPLE_ESCAPES:
        out.append(_SIMPLE_ESCAPES[code])
        return position
    if code in _HEX_DIGITS:
        width = _HEX_DIGITS[code]
        digits = body[position : position + width]
        if as_bytes and code in "uU":
            raise _LiteralError(f"\\{code} escapes are not allowed in bytes")
        if len(digits) < width or not set(digits) <= _HEX:
            raise _LiteralError(f"invalid \\{code} escape")
        _put(int(digits, 16), as_bytes and code in "xX", out)
        return position + width
    if code in "0123":
        digits = body[position : position + 2]
        if len(digits) < 2 or not all("0" <= d <= "7" for d in digits):
            raise _LiteralError("invalid octal escape")
        _put(int(code + digits, 8), as_bytes, out)
        return position + 2
    raise _LiteralError(f"unknown escape \\{code}")


def _put(value: int, as_byte: bool, out: bytearray) -> None:
    """A byte in a bytes literal; otherwise a code point, which must be a valid rune."""
    if as_byte:
        out.append(value)
        return
    if value > _MAX_RUNE or 0xD800 <= value <= 0xDFFF:
        raise _LiteralError("invalid unicode code point")
    out += chr(value).encode("utf-8")
