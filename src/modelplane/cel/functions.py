"""Every function a Modelplane CEL expression may call, by name."""

from __future__ import annotations

from typing import Final

from modelplane.cel import types as t
from modelplane.cel.extensions import EXTENSIONS
from modelplane.cel.library import KUBERNETES
from modelplane.cel.operators import OPERATORS
from modelplane.cel.stdlib import STANDARD


def _table() -> dict[str, t.Function]:
    table = dict(OPERATORS)
    for function in (*STANDARD, *KUBERNETES, *EXTENSIONS):
        if function.name in table:
            raise RuntimeError(f"CEL function {function.name} declared twice")
        table[function.name] = function
    return table


FUNCTIONS: Final = _table()
