"""`x-kubernetes-validations`: messages, paths, reasons and what is skipped on create."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.schema.cel_rules import join_field_path

from .support import Obj, errors_of, make_object, make_schema

PROPS: Obj = {
    "replicas": {"type": "integer"},
    "ratio": {"type": "number"},
    "name": {"type": "string", "pattern": "^[a-z]+$"},
    "mode": {"type": "string", "enum": ["DRA", "Synthetic"]},
    "size": {"x-kubernetes-int-or-string": True},
    "when": {"type": "string", "format": "date-time"},
    "wait": {"type": "string", "format": "duration"},
    "x-y": {"type": "string"},
    "namespace": {"type": "string"},
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "pools": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
            "x-kubernetes-validations": [
                {"rule": "self.count > 0", "messageExpression": "'pool ' + self.name + ' is empty'"}
            ],
        },
    },
    "attrs": {
        "type": "object",
        "additionalProperties": {
            "type": "string",
            "x-kubernetes-validations": [{"rule": "self != ''", "message": "must not be empty"}],
        },
    },
}


def spec_with(*rules: Obj) -> Obj:
    return {"type": "object", "properties": PROPS, "x-kubernetes-validations": list(rules)}


def run(rule: Obj, spec: Any) -> list[str]:
    return errors_of(make_schema(spec_with(rule)), make_object(spec))


CASES: list[tuple[str, Obj, Obj, list[str]]] = [
    ("passes", {"rule": "self.replicas > 0"}, {"replicas": 1}, []),
    (
        "message",
        {"rule": "self.replicas > 0", "message": "replicas must be positive"},
        {"replicas": 0},
        ['spec: Invalid value: "object": replicas must be positive'],
    ),
    (
        "default message names the rule",
        {"rule": "  self.replicas > 0 "},
        {"replicas": 0},
        ['spec: Invalid value: "object": failed rule: self.replicas > 0'],
    ),
    (
        "fieldPath",
        {"rule": "self.replicas > 0", "message": "m", "fieldPath": ".replicas"},
        {"replicas": 0},
        ['spec.replicas: Invalid value: "object": m'],
    ),
    (
        "messageExpression",
        {"rule": "self.replicas > 0", "messageExpression": "'got ' + string(self.replicas)"},
        {"replicas": -2},
        ['spec: Invalid value: "object": got -2'],
    ),
    (
        "messageExpression error falls back to message",
        {"rule": "self.replicas > 0", "message": "fallback", "messageExpression": "self.nope"},
        {"replicas": 0},
        ['spec: Invalid value: "object": fallback'],
    ),
    (
        "empty messageExpression falls back",
        {"rule": "self.replicas > 0", "message": "fallback", "messageExpression": "' '"},
        {"replicas": 0},
        ['spec: Invalid value: "object": fallback'],
    ),
    (
        "reason Forbidden",
        {"rule": "!has(self.name)", "message": "no names", "reason": "FieldValueForbidden",
         "fieldPath": ".name"},
        {"name": "a"},
        ["spec.name: Forbidden: no names"],
    ),
    (
        "reason Required",
        {"rule": "has(self.name)", "message": "name it", "reason": "FieldValueRequired",
         "fieldPath": ".name"},
        {},
        ["spec.name: Required value: name it"],
    ),
    (
        "reason Duplicate",
        {"rule": "false", "reason": "FieldValueDuplicate"},
        {},
        ['spec: Duplicate value: "object"'],
    ),
    ("transition rule skipped on create", {"rule": "self == oldSelf"}, {"replicas": 1}, []),
    ("any oldSelf reference is a transition rule", {"rule": "oldSelf.x < 0 && false"}, {}, []),
    (
        "runtime error names the rule",
        {"rule": "self.replicas > 0"},
        {},
        ['spec: Invalid value: "object": no such key: replicas evaluating rule: self.replicas > 0'],
    ),
    (
        "overload error",
        {"rule": "self.name > 1"},
        {"name": "a"},
        [
            "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a "
            "supported operator, function or macro signature for rule: self.name > 1"
        ],
    ),
    (
        "rule that does not parse",
        {"rule": "self.?name.orValue('') == ''"},
        {},
        ["spec: Internal error: rule compile error"],
    ),
    (
        "a global function called as a member does not compile",
        {"rule": "self.name.isIP()"},
        {"name": "a"},
        ["spec: Internal error: rule compile error: found no matching overload for 'isIP' "
         "applied to 'dyn.()': self.name.isIP()"],
    ),
    (
        "a rule typed other than bool does not compile",
        {"rule": "'yes'"},
        {},
        ["spec: Internal error: rule compile error: must evaluate to bool, not string: 'yes'"],
    ),
    (
        "a dyn result that is not a bool",
        {"rule": "self.replicas"},
        {"replicas": 1},
        ['spec: Invalid value: "object": rule must evaluate to a bool, not int: self.replicas'],
    ),
    (
        "a messageExpression that is not a string falls back",
        {"rule": "false", "message": "fallback", "messageExpression": "self.replicas"},
        {"replicas": 1},
        ['spec: Invalid value: "object": fallback'],
    ),
    (
        "the cost limit stops a rule",
        {"rule": "!self.name.contains('z')"},
        {"name": "a" * 10_000_010},
        ['spec: Invalid value: "object": operation cancelled: actual cost limit exceeded '
         "(1000000 units) evaluating rule: !self.name.contains('z')"],
    ),
    ("an int equals the same double", {"rule": "self.replicas == 1.0"}, {"replicas": 1}, []),
    ("an int orders against a double", {"rule": "self.replicas < 1.5"}, {"replicas": 1}, []),
    ("an error on the deciding side of || is absorbed", {"rule": "self.nope || true"}, {}, []),
    (
        "quantities",
        {"rule": "quantity(self.size).compareTo(quantity('1Gi')) > 0 && isQuantity('1.5Gi')"},
        {"size": "2Gi"},
        [],
    ),
    (
        "semantic versions",
        {"rule": "semver('1.34.0').isGreaterThan(semver('1.33.2'))"},
        {},
        [],
    ),
    ("integral float in an integer field", {"rule": "self.replicas == 3"}, {"replicas": 3.0}, []),
    ("an int in a number field is a double", {"rule": "self.ratio == 1.0"}, {"ratio": 1}, []),
    ("int-or-string keeps ints", {"rule": "self.size == 5"}, {"size": 5}, []),
    ("int-or-string keeps strings", {"rule": "self.size.endsWith('%')"}, {"size": "50%"}, []),
    (
        "date-time is a timestamp",
        {"rule": "self.when < timestamp('2030-01-01T00:00:00Z')"},
        {"when": "2024-05-01T10:00:00Z"},
        [],
    ),
    ("duration is a duration", {"rule": "self.wait > duration('90s')"}, {"wait": "2m"}, []),
    (
        "unknown fields keep their JSON types",
        {"rule": "self.free.n == 3 && self.free.big > 1.0 && self.free.l[0] == 'a'"},
        {"free": {"n": 3, "big": 2**70, "l": ["a"]}},
        [],
    ),
    ("dashes are escaped", {"rule": "self.x__dash__y == 'v'"}, {"x-y": "v"}, []),
    ("keywords are escaped", {"rule": "self.__namespace__ == 'n'"}, {"namespace": "n"}, []),
    (
        "list item rules carry the index",
        {"rule": "true"},
        {"pools": [{"name": "a", "count": 1}, {"name": "b", "count": 0}]},
        ['spec.pools[1]: Invalid value: "object": pool b is empty'],
    ),
    (
        "map value rules carry the key",
        {"rule": "true"},
        {"attrs": {"arch": "", "os": "linux"}},
        ['spec.attrs[arch]: Invalid value: "string": must not be empty'],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "spec", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rule(rule: Obj, spec: Obj, expected: list[str]) -> None:
    errors = run(rule, spec)
    if expected and expected[0].endswith("rule compile error"):
        assert len(errors) == 1 and errors[0].startswith(expected[0])
    else:
        assert errors == expected


def test_blocking_errors_skip_rules() -> None:
    errors = run({"rule": "false", "message": "never shown"}, {"mode": "Other"})
    assert errors == [
        "Invalid value: null: some validation rules were not checked because the object was "
        "invalid; correct the existing errors to complete validation",
        'spec.mode: UnsupportedValueError value: "Other": supported values: "DRA", "Synthetic"',
    ]


def test_non_blocking_errors_keep_rules() -> None:
    errors = run({"rule": "false", "message": "shown"}, {"name": "UPPER"})
    assert errors == [
        'spec: Invalid value: "object": shown',
        "spec.name: Invalid value: \"UPPER\": spec.name in body should match '^[a-z]+$'",
    ]


def test_null_values_are_not_evaluated() -> None:
    spec = {
        "type": "object",
        "properties": {
            "opt": {
                "type": "string",
                "nullable": True,
                "x-kubernetes-validations": [{"rule": "false"}],
            }
        },
    }
    assert errors_of(make_schema(spec), make_object({"opt": None})) == []


def test_root_rules_see_only_name_and_generate_name_in_metadata() -> None:
    root_rules = [
        {"rule": "self.metadata.name == 'w' && !has(self.metadata.labels)", "message": "m"},
        {"rule": "self.spec.x == 'v'", "message": "spec visible"},
    ]
    schema = make_schema(
        {"type": "object", "properties": {"x": {"type": "string"}}}, root_rules=root_rules
    )
    obj = make_object({"x": "v"})
    obj["metadata"]["labels"] = {"a": "b"}
    assert errors_of(schema, obj) == []


def test_rules_compile_once_per_schema() -> None:
    schema = make_schema(spec_with({"rule": "self.replicas > 0", "messageExpression": "'bad'"}))
    for replicas in (1, 0, 2, 0):
        schema.validate(
            make_object({"replicas": replicas, "pools": [{"name": "a", "count": 1}] * 3})
        )
    # the spec rule, its messageExpression, the pool rule (its messageExpression never ran)
    assert schema.compiled_rules == 3


LIBRARY_RULES = [
    "self.name.lowerAscii() == 'hello, world!'",
    "self.name.upperAscii() == 'HELLO, WORLD!'",
    "self.name.split(', ') == ['Hello', 'World!']",
    "self.name.split(',', 1) == ['Hello, World!']",
    "self.name.indexOf('o') == 4 && self.name.lastIndexOf('o') == 8",
    "self.name.indexOf('o', 5) == 8",
    "self.name.replace('l', 'L') == 'HeLLo, WorLd!'",
    "self.name.replace('l', 'L', 1) == 'HeLlo, World!'",
    "self.name.substring(7) == 'World!' && self.name.substring(0, 5) == 'Hello'",
    "'  x '.trim() == 'x'",
    "self.name.charAt(1) == 'e'",
    "['a', 'b'].join('-') == 'a-b' && ['a'].join() == 'a'",
    "self.name.reverse() == '!dlroW ,olleH'",
    "self.name.matches('W.rld') && self.name.startsWith('Hell') && self.name.endsWith('!')",
    "self.name.find('[A-Z][a-z]+') == 'Hello'",
    "self.name.findAll('[A-Z]') == ['H', 'W']",
    "self.nums.isSorted() && self.nums.sum() == 6 && self.nums.max() == 3 && self.nums.min() == 1",
    "self.nums.indexOf(2) == 1 && self.nums.lastIndexOf(9) == -1",
    "[1, 1, 2].distinct() == [1, 2] && [[1], [2, 3]].flatten() == [1, 2, 3]",
    "[3, 1, 2].sort() == [1, 2, 3] && self.nums.slice(1, 3) == [2, 3]",
    "sets.contains(self.nums, [1, 2]) && sets.equivalent([1, 2], [2, 1])",
    "sets.intersects([1], [1, 5])",
    "!sets.contains(self.nums, [7])",
    "isIP('10.0.0.1') && !isIP('10.0.0.300') && isCIDR('10.0.0.0/8') && isURL('https://x.io/a')",
    "isIP('fd00::1') && !isIP('::ffff:10.0.0.1') && !isIP('fe80::1%eth0')",
    "isCIDR('fd00::/8') && !isCIDR('::ffff:10.0.0.0/104') && !isCIDR('10.0.0.0/255.0.0.0')",
    "!isURL('not a url') && isURL('/a/path')",
    "[3, 1, 2].reverse() == [2, 1, 3] && [[[1], [2]], [[3]]].flatten(2) == [1, 2, 3]",
    "sets.equivalent([1, 1, 2], [2, 1]) && !sets.intersects([1], [2])",
    "self.name.contains('World') && 'World' in self.words",
    "self.nums.all(n, n > 0) && self.nums.exists_one(n, n == 2)",
    "self.nums.filter(n, n > 1).size() == 2 && self.nums.map(n, n * 2) == [2, 4, 6]",
]


@pytest.mark.parametrize("rule", LIBRARY_RULES)
def test_library(rule: str) -> None:
    spec = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "nums": {"type": "array", "items": {"type": "integer"}},
            "words": {"type": "array", "items": {"type": "string"}},
        },
        "x-kubernetes-validations": [{"rule": rule}],
    }
    obj = make_object({"name": "Hello, World!", "nums": [1, 2, 3], "words": ["Hello", "World"]})
    assert errors_of(make_schema(spec), obj) == []


@pytest.mark.parametrize(
    ("field_path", "expected"),
    [
        (".replicas", "spec.replicas"),
        (".a.b", "spec.a.b"),
        (".labels['app.kubernetes.io/name']", "spec.labels[app.kubernetes.io/name]"),
        ('.m["k"].v', "spec.m[k].v"),
        (".list[2]", "spec.list[2]"),
    ],
)
def test_field_path(field_path: str, expected: str) -> None:
    assert join_field_path("spec", field_path) == expected


def test_kept_rule_outcomes_tell_values_apart() -> None:
    """A node's outcome is reused only for the same value: 1, 1.0 and true are not one."""
    spec = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": [{"rule": "type(self.v) == int", "message": "not an int"}],
    }
    schema = make_schema(spec)
    verdicts = [errors_of(schema, make_object({"v": v})) for v in (1, 1.0, True, 1, 1.0)]
    refused = ['spec: Invalid value: "object": not an int']
    assert verdicts == [[], refused, refused, [], refused]


def test_kept_rule_outcomes_follow_the_old_value() -> None:
    spec = {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}],
            }
        },
    }
    schema = make_schema(spec)
    new = make_object({"name": "a"})
    answers = [
        [str(e) for e in schema.validate(new, make_object({"name": old}))]
        for old in ("a", "b", "a", "b")
    ]
    assert answers == [[], ['spec.name: Invalid value: "string": immutable']] * 2


def test_rule_free_subtrees_are_not_walked() -> None:
    spec = {
        "type": "object",
        "properties": {
            "plain": {"type": "object", "properties": {"a": {"type": "string"}}},
            "ruled": {
                "type": "object",
                "properties": {"b": {"type": "string"}},
                "x-kubernetes-validations": [{"rule": "self.b != 'x'", "message": "no x"}],
            },
        },
    }
    schema = make_schema(spec)
    spec_node = schema.node.properties["spec"]
    assert spec_node.rules_below
    assert not spec_node.properties["plain"].rules_below
    assert spec_node.properties["ruled"].rules_below
    obj = make_object({"plain": {"a": "x"}, "ruled": {"b": "x"}})
    assert errors_of(schema, obj) == ['spec.ruled: Invalid value: "object": no x']
