"""google/cel-spec's conformance suite, scored against what Kubernetes' cel-go does.

Every `relevant` case of ../shared/conformance/cel-spec/cel_spec.jsonl (see
SOURCES.md there) runs through `modelplane.cel` with its bindings declared as
typed variables. The expectation is `k8s_expect` where a Kubernetes API server
answers differently from the spec, else `expect`. Scoring is strict: a value
must match in type and value (doubles by value, NaN equal to NaN; maps in any
order), an expected runtime error must be a runtime error, and an expected
compile error (`k8s_expect`) must be a compile error. One refinement of the file's
expectations: Kubernetes (1.29+) validates literal arguments of duration(),
timestamp() and matches() at compile time, which `k8s_expect` does not model, so
an expected runtime error is also met by that validator's compile error
("invalid duration argument").

The suite fails when fewer than 99% of the relevant cases pass, and it lists
every failing case that is not a known divergence. Known divergences live in
KNOWN_DIVERGENCES below, each with its reason; design/cel-divergences.md records
them for users. A known divergence that starts to pass fails the suite too, so
the table stays true.
"""

import argparse
import base64
import io
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import pytest

from modelplane.cel import CelCompileError, CelRuntimeError, Duration, Timestamp
from modelplane.cel import types as t
from modelplane.cel.environment import compile_program
from modelplane.cel.values import TypeValue, Uint, type_name
from modelplane_cli import cel_command

PASS_RATE: Final = 0.99
# Case id -> why Modelplane answers differently from Kubernetes. Every entry is
# also in design/cel-divergences.md. Empty: every relevant case passes.
KNOWN_DIVERGENCES: Final[dict[str, str]] = {}

_PRIMITIVES: Final = {
    "INT64": t.INT,
    "UINT64": t.UINT,
    "DOUBLE": t.DOUBLE,
    "STRING": t.STRING,
    "BYTES": t.BYTES,
    "BOOL": t.BOOL,
}


def declared_type(spec: Mapping[str, Any]) -> t.CelType:
    """A cel-spec `type_env` type as Modelplane's checker sees it."""
    if "primitive" in spec:
        return _PRIMITIVES[spec["primitive"]]
    if "list_type" in spec:
        return t.list_of(declared_type(spec["list_type"]["elem_type"]))
    if "map_type" in spec:
        entry = spec["map_type"]
        return t.map_of(declared_type(entry["key_type"]), declared_type(entry["value_type"]))
    if "null" in spec:
        return t.NULL
    if spec.get("message_type") in (t.TIMESTAMP.name, t.DURATION.name):
        return t.CelType(spec["message_type"])
    raise AssertionError(f"a type the conformance file should not carry: {spec}")


def to_value(typed: list[Any]) -> Any:
    """A typed value of the file (`["uint", 1]`) as a Modelplane runtime value."""
    kind = typed[0]
    converters: dict[str, Any] = {
        "int": int,
        "uint": Uint,
        "double": float,
        "string": str,
        "bool": bool,
        "bytes": bytes.fromhex,
        "duration": Duration,
        "timestamp": Timestamp,
    }
    if kind == "null":
        return None
    if kind == "list":
        return tuple(to_value(item) for item in typed[1])
    if kind == "map":
        return {to_value(key): to_value(value) for key, value in typed[1]}
    return converters[kind](typed[1])


def to_typed(value: Any) -> list[Any]:
    """A Modelplane result in the file's typed form, maps sorted for comparison."""
    kind = type_name(value)
    if kind in ("int", "uint", "bool", "string", "double"):
        return [kind, int(value) if kind == "uint" else value]
    if kind == "bytes":
        return ["bytes", value.hex()]
    if kind == "null_type":
        return ["null"]
    if kind == "list":
        return ["list", [to_typed(item) for item in value]]
    if kind == "map":
        return ["map", sorted(([to_typed(k), to_typed(v)] for k, v in value.items()), key=repr)]
    if isinstance(value, TypeValue):
        return ["type", value.name]
    if isinstance(value, Timestamp):
        return ["timestamp", value.unix_nanos]
    if isinstance(value, Duration):
        return ["duration", value.nanos]
    return [kind, repr(value)]


def normalized(typed: list[Any]) -> list[Any]:
    """An expected value with its maps sorted like to_typed's."""
    if typed[0] == "list":
        return ["list", [normalized(item) for item in typed[1]]]
    if typed[0] == "map":
        entries = ([normalized(k), normalized(v)] for k, v in typed[1])
        return ["map", sorted(entries, key=repr)]
    if typed[0] == "double":
        return ["double", float(typed[1])]
    return typed


def same(left: Any, right: Any) -> bool:
    """Typed values equal in type and value; NaN equals NaN, as the suite means it."""
    if isinstance(left, float) and isinstance(right, float):
        return left == right or (math.isnan(left) and math.isnan(right))
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    return type(left) is type(right) and left == right


def outcome(case: Mapping[str, Any]) -> tuple[str, Any]:
    """("value", typed) | ("compile", message) | ("runtime", message) for one case."""
    variables = {e["name"]: declared_type(e["ident"]["type"]) for e in case.get("type_env", [])}
    bindings = case.get("bindings", {})
    for name in bindings:
        variables.setdefault(name, t.DYN)  # bound but undeclared: dyn, as cel.bind would
    try:
        program = compile_program(case["expr"], variables)
    except CelCompileError as error:
        return "compile", str(error)
    try:
        result = program.run({name: to_value(value) for name, value in bindings.items()})
    except CelRuntimeError as error:
        return "runtime", str(error)
    return "value", to_typed(result)


def expectation(case: Mapping[str, Any]) -> tuple[str, Any]:
    """What Kubernetes answers: ("value", typed), ("compile", None) or ("runtime", None)."""
    expected = case.get("k8s_expect", case["expect"])
    if "value" in expected:
        return "value", normalized(expected["value"])
    return ("compile" if expected["error"] == "compile" else "runtime"), None


_LITERAL_VALIDATORS: Final = tuple(
    f"invalid {name} argument" for name in ("duration", "timestamp", "matches")
)


def passes(case: Mapping[str, Any]) -> tuple[bool, tuple[str, Any]]:
    got, want = outcome(case), expectation(case)
    if want[0] == "runtime" and got[0] == "compile" and got[1] in _LITERAL_VALIDATORS:
        return True, got
    if want[0] != got[0]:
        return False, got
    return (want[0] != "value" or same(want[1], got[1])), got


def relevant(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [case for case in cases if case["tier"] == "relevant"]


def test_the_conformance_file_has_both_tiers(cel_spec_cases: list[dict[str, Any]]) -> None:
    tiers = {case["tier"] for case in cel_spec_cases}
    assert tiers == {"relevant", "unsupported"}
    assert len(relevant(cel_spec_cases)) > 1000
    ids = [case["id"] for case in cel_spec_cases]
    assert len(ids) == len(set(ids))


def test_relevant_cases_answer_as_kubernetes(cel_spec_cases: list[dict[str, Any]]) -> None:
    cases = relevant(cel_spec_cases)
    failures: dict[str, str] = {}
    for case in cases:
        ok, got = passes(case)
        if not ok:
            want = case.get("k8s_expect", case["expect"])
            failures[case["id"]] = f"{case['expr']!r}: want {want}, got {got}"
    rate = 1 - len(failures) / len(cases)
    unexpected = sorted(set(failures) - set(KNOWN_DIVERGENCES))
    now_passing = sorted(set(KNOWN_DIVERGENCES) - set(failures))
    report = "\n".join(f"  {case_id}: {failures[case_id]}" for case_id in unexpected)
    assert not unexpected, (
        f"pass rate {rate:.2%} of {len(cases)} relevant cases; "
        f"{len(unexpected)} failing cases are not known divergences:\n{report}"
    )
    assert not now_passing, f"known divergences that now pass, remove them: {now_passing}"
    assert rate >= PASS_RATE, f"pass rate {rate:.2%} is below {PASS_RATE:.0%}"


def unsupported_problem(case: Mapping[str, Any]) -> str | None:
    """What is wrong with how an unsupported case fails, if anything: it must be a
    compile error naming the problem (design/cel-divergences.md, Conformance), never a
    value, a runtime error, an internal error or a crash."""
    kind, message = outcome(case)
    if kind != "compile":
        return f"{case['id']}: an unsupported case gave a {kind} outcome: {message!r}"
    if "internal" in message:
        return f"{case['id']}: {message}"
    if "Syntax error" not in message and "undeclared reference" not in message:
        return f"{case['id']}: {message}"
    return None


def test_unsupported_cases_fail_cleanly(cel_spec_cases: list[dict[str, Any]]) -> None:
    problems = [
        problem
        for case in cel_spec_cases
        if case["tier"] == "unsupported" and (problem := unsupported_problem(case)) is not None
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("expr", "kind"),
    [("[1].exists(x, x == 1)", "value"), ("1 / 0", "runtime"), ("a.?b", None)],
)
def test_an_unsupported_case_must_fail_to_compile(expr: str, kind: str | None) -> None:
    """rev-cel F5: one that started to evaluate, to a value or to a runtime error,
    would have passed unnoticed."""
    problem = unsupported_problem({"id": "probe", "expr": expr})
    if kind is None:
        assert problem is None
    else:
        assert problem is not None and f"gave a {kind} outcome" in problem


def test_known_divergences_are_documented() -> None:
    design = (Path(__file__).resolve().parents[2] / "design" / "cel-divergences.md").read_text()
    for case_id in KNOWN_DIVERGENCES:
        assert case_id in design, f"{case_id} is not recorded in design/cel-divergences.md"


# The same cases through `modelplane cel eval --jsonl`, fed their `cli_expr` (bindings
# inlined with cel.bind). The CLI's JSON keeps values JSON can carry as themselves
# and tags the others at the top level, so expectations are mapped the same way.

_NON_FINITE: Final = {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}


def cli_json(typed: list[Any], top: bool = True) -> Any:
    """What `cel eval` prints for an expected typed value."""
    kind = typed[0]
    if kind == "double":
        value = float(typed[1])
        if math.isfinite(value):
            return {"result": value} if top else value
        text = _NON_FINITE[str(value)]
        return {"result": text, "type": "double"} if top else text
    if kind == "bytes":
        text = base64.b64encode(bytes.fromhex(typed[1])).decode("ascii")
        return {"result": text, "type": "bytes"} if top else text
    if kind == "list":
        plain: Any = [cli_json(item, top=False) for item in typed[1]]
    elif kind == "map":
        plain = {_cli_key(key): cli_json(value, top=False) for key, value in typed[1]}
    elif kind == "null":
        plain = None
    else:  # int, uint, bool, string, type: JSON carries them as they are
        plain = typed[1]
    return {"result": plain} if top else plain


def _cli_key(typed: list[Any]) -> str:
    if typed[0] == "bool":
        return "true" if typed[1] else "false"
    return str(typed[1])


def _same_json(left: Any, right: Any) -> bool:
    if isinstance(left, float) and isinstance(right, float):
        return same(left, right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            _same_json(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_same_json(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


def test_relevant_cases_through_the_cli(cel_spec_cases: list[dict[str, Any]]) -> None:
    cases = relevant(cel_spec_cases)
    stdin = "".join(json.dumps({"expr": case["cli_expr"]}) + "\n" for case in cases)
    out = io.StringIO()
    args = argparse.Namespace(
        expr=None, jsonl=True, device=None, device_name=None, kubernetes_version=None
    )
    assert cel_command.run_eval(args, io.StringIO(stdin), out, io.StringIO()) == 0
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(answers) == len(cases)
    failures: list[str] = []
    for case, answer in zip(cases, answers, strict=True):
        kind, value = expectation(case)
        if kind == "value":
            ok = _same_json(answer, cli_json(value))
        else:
            got = answer.get("error")
            ok = got == kind or (
                kind == "runtime" and got == "compile" and answer["message"] in _LITERAL_VALIDATORS
            )
        if not ok and case["id"] not in KNOWN_DIVERGENCES:
            failures.append(f"  {case['id']}: {case['cli_expr']!r} printed {answer}")
    assert not failures, "the CLI answers differently:\n" + "\n".join(failures)
