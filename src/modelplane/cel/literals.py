"""CEL literals from celpy's tokens, with cel-go's lexical rules where celpy is looser."""

from __future__ import annotations

import re
from typing import Any, Final

import lark
from celpy.evaluation import celbytes, celstr

from modelplane.cel import types as t
from modelplane.cel.errors import CelCompileError
from modelplane.cel.values import INT64_MAX, INT64_MIN, UINT64_MAX, Uint

_CEL_FLOAT: Final = re.compile(
    r"-?(?:[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|[0-9]*\.[0-9]+(?:[eE][+-]?[0-9]+)?)"
)


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
            return str(celstr(token)), t.STRING
        if kind == "BYTES_LIT":
            return bytes(celbytes(token)), t.BYTES
        if kind == "BOOL_LIT":
            return text == "true", t.BOOL
        if kind == "NULL_LIT":
            return None, t.NULL
    except (ValueError, UnicodeError) as error:
        raise CelCompileError(f"invalid literal {text}: {error}") from None
    raise CelCompileError(f"unsupported literal {text}")
