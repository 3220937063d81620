"""The rule-cost lint flags rules whose cost grows with an unbounded value."""

from __future__ import annotations

import pytest

from modelplane_cli.schema import rule_cost_problems

from .support import Obj, make_schema

UNBOUNDED_LIST: Obj = {"type": "array", "items": {"type": "string", "maxLength": 8}}
BOUNDED_LIST: Obj = {**UNBOUNDED_LIST, "maxItems": 4}
POOLS: Obj = {
    "type": "array",
    "maxItems": 4,
    "items": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 8},
            "devices": UNBOUNDED_LIST,
            "zones": BOUNDED_LIST,
        },
    },
}
PROPS: Obj = {
    "free": {"type": "string"},
    "short": {"type": "string", "maxLength": 8},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "when": {"type": "string", "format": "date-time"},
    "many": UNBOUNDED_LIST,
    "few": BOUNDED_LIST,
    "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 8}},
    "tags": {
        "type": "object",
        "maxProperties": 8,
        "additionalProperties": {"type": "string", "maxLength": 8},
    },
    "pools": POOLS,
    "x-y": UNBOUNDED_LIST,
}


def problems(rule: str, message_expression: str = "") -> list[str]:
    entry: Obj = {"rule": rule}
    if message_expression:
        entry["messageExpression"] = message_expression
    spec = {"type": "object", "properties": PROPS, "x-kubernetes-validations": [entry]}
    return rule_cost_problems(make_schema(spec))


CASES: list[tuple[str, str, list[str]]] = [
    ("bounded fields are fine", "self.short == 'x' && self.mode == 'a' && self.few.all(f, f != '')",
     []),
    ("timestamps have a fixed size", "self.when != ''", []),
    ("comparing an unbounded string is fine", "self.free == 'x'", []),
    (
        "iterating an unbounded list",
        "self.many.all(m, m != '')",
        ['spec: rule "self.many.all(m, m != \'\')" uses all() on spec.many, '
         "an array without maxItems"],
    ),
    (
        "size of an unbounded list",
        "size(self.many) < 3",
        ['spec: rule "size(self.many) < 3" uses size() on spec.many, an array without maxItems'],
    ),
    (
        "member size of an unbounded map",
        "self.labels.size() < 3",
        ['spec: rule "self.labels.size() < 3" uses size() on spec.labels, '
         "a map without maxProperties"],
    ),
    ("bounded map", "self.tags.all(k, k != '')", []),
    (
        "scanning an unbounded string",
        "self.free.matches('^a')",
        ["spec: rule \"self.free.matches('^a')\" uses matches() on spec.free, "
         "a string without maxLength"],
    ),
    (
        "nested iteration reaches the inner list",
        "self.pools.all(p, p.zones.size() < 3 && p.devices.exists(d, d == 'x'))",
        [
            "spec: rule \"self.pools.all(p, p.zones.size() < 3 && p.devices.exists(d, d == 'x'))\" "
            "uses exists() on spec.pools[*].devices, an array without maxItems"
        ],
    ),
    (
        "escaped names resolve",
        "self.x__dash__y.exists(v, v == 'a')",
        ["spec: rule \"self.x__dash__y.exists(v, v == 'a')\" uses exists() on spec.x-y, "
         "an array without maxItems"],
    ),
    (
        "messageExpressions count too",
        "true",
        ["spec: rule \"self.many.join(',')\" uses join() on spec.many, an array without maxItems"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_cost(rule: str, expected: list[str]) -> None:
    message_expression = "self.many.join(',')" if rule == "true" else ""
    assert problems(rule, message_expression) == expected


def test_rules_on_unbounded_nodes_are_flagged() -> None:
    spec = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]},
            "ids": {
                "type": "array",
                "items": {"type": "integer"},
                "x-kubernetes-validations": [{"rule": "true"}],
            },
        },
    }
    assert rule_cost_problems(make_schema(spec)) == [
        'spec.ids: rule "true" is evaluated on an array without maxItems',
        "spec.name: rule \"self != ''\" is evaluated on a string without maxLength",
    ]
