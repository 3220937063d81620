"""The compiled form of an expression: closures over variables and a budget."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from modelplane.cel import types as t
from modelplane.cel.budget import Budget

Vars = dict[str, Any]
Fn = Callable[[Vars, Budget], Any]


@dataclass(frozen=True, slots=True)
class Node:
    fn: Fn
    type: t.CelType


def const(value: Any, cel_type: t.CelType) -> Node:
    return Node(lambda _v, _b: value, cel_type)
