"""The compiled validity check of built-in kinds agrees with jsonschema, its oracle.

`validate_builtin` asks jsonschema for errors only when the compiled check fails an
object, so the two must give the same verdict on every object: valid seeds, then
the same seeds with fields removed, replaced, added and retyped.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from modelplane_cli.schema import builtin
from modelplane_cli.schema.builtin_verdict import Compiler, UnsupportedSchemaError

from .support import Obj
from .test_builtin import claim_template, deployment

VERSION = "1.34"


def service() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "kimi", "namespace": "ml-team"},
        "spec": {
            "selector": {"app": "kimi"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def job() -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "download", "namespace": "ml-team"},
        "spec": {
            "backoffLimit": 2,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "fetch",
                            "image": "busybox",
                            "resources": {"requests": {"cpu": "100m", "memory": 1.5}},
                            "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                        }
                    ],
                    "volumes": [{"name": "cache", "persistentVolumeClaim": {"claimName": "c"}}],
                }
            },
        },
    }


def namespace() -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml-team"}}


SEEDS = [deployment, claim_template, service, job, namespace]


def _directory() -> str:
    return builtin._resolve(VERSION)[1]  # pyright: ignore[reportPrivateUsage]


def _verdicts(obj: Obj) -> tuple[bool, bool]:
    """(compiled check's verdict, whether jsonschema finds no error)."""
    directory = _directory()
    filename = builtin._schema_file(str(obj["apiVersion"]), str(obj["kind"]))  # pyright: ignore[reportPrivateUsage]
    check = builtin._verdict(directory, filename)  # pyright: ignore[reportPrivateUsage]
    validator = builtin._validator(directory, filename)  # pyright: ignore[reportPrivateUsage]
    assert check is not None and validator is not None
    return check(obj), not any(True for _ in validator.iter_errors(obj))


@pytest.mark.parametrize("build", SEEDS)
def test_valid_seeds_pass_both(build: Any) -> None:
    assert _verdicts(build()) == (True, True)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
            found.extend(_paths(item, (*prefix, i)))
    return found


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(
        ["", "x", "1Gi", "100m", "1.5", "2e3", "not a quantity", "Always", "TCP", "Never", "v1"]
    ),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2),
        st.dictionaries(
            st.sampled_from(["name", "image", "bogus", "containers", "port", "cpu"]),
            inner,
            max_size=2,
        ),
    ),
    max_leaves=4,
)
_KEYS = st.sampled_from(["bogus", "name", "labels", "spec", "replicas", "image", "ports", "cpu"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_compiled_verdict_matches_jsonschema(data: st.DataObject) -> None:
    obj: Obj = data.draw(st.sampled_from(SEEDS))()
    for _ in range(data.draw(st.integers(1, 3))):
        # apiVersion and kind are kept: they pick the schema.
        paths = [p for p in _paths(obj) if p and p[0] not in ("apiVersion", "kind")]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent: Any = obj
        for step in path[:-1]:
            parent = parent[step]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        target = parent[path[-1]]
        if action == "replace":
            parent[path[-1]] = data.draw(_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(target, dict):
            target[data.draw(_KEYS)] = data.draw(_VALUES)
        elif isinstance(target, list):
            target.append(data.draw(_VALUES))  # pyright: ignore[reportUnknownMemberType]
    snapshot = copy.deepcopy(obj)
    compiled, oracle = _verdicts(obj)
    event(f"valid: {oracle}")
    assert compiled == oracle, obj
    assert obj == snapshot  # neither check changes what it reads


def test_every_kind_of_the_default_version_compiles() -> None:
    """No kind falls back to jsonschema for want of a keyword the compiler lacks."""
    directory = _directory()
    names = [
        e.name
        for e in builtin._schema_dir().joinpath(directory).iterdir()  # pyright: ignore[reportPrivateUsage]
        if not e.name.startswith("_") and e.name != "all.json"
    ]
    assert len(names) > 500
    missing = [n for n in names if builtin._verdict(directory, n) is None]  # pyright: ignore[reportPrivateUsage]
    assert missing == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^a$"},
        {"$ref": "https://example.com/other.json"},
        {"type": "thing"},
        {"enum": [1, 2]},
        {"properties": {"a": {"minLength": 1}}},
    ],
)
def test_what_it_cannot_compile_exactly_is_refused(schema: dict[str, Any]) -> None:
    """A keyword it does not implement sends the kind to jsonschema, never a guess."""
    with pytest.raises(UnsupportedSchemaError):
        Compiler({}, builtin.QUANTITY_FORMAT).compile_root(schema)


def test_quantity_format_and_null_quantities() -> None:
    obj = deployment()
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["limits"]["cpu"] = "lots"
    assert _verdicts(obj) == (False, False)
    container["resources"]["limits"]["cpu"] = None  # both arms of the oneOf accept null
    assert _verdicts(obj) == (False, False)
    container["resources"]["limits"]["cpu"] = "1500m"
    assert _verdicts(obj) == (True, True)


def test_a_failed_compilation_leaves_no_half_compiled_definition() -> None:
    definitions = {
        "Good": {"type": "object", "properties": {"bad": {"$ref": "#/$defs/Bad"}}},
        "Bad": {"type": "string", "pattern": "^a$"},
        "Plain": {"type": "string"},
    }
    compiler = Compiler(definitions, builtin.QUANTITY_FORMAT)
    with pytest.raises(UnsupportedSchemaError):
        compiler.compile_root({"$ref": "/api/_definitions.json#/$defs/Good"})
    check = compiler.compile_root({"$ref": "/api/_definitions.json#/$defs/Plain"})
    assert check("x") and not check(1)
    with pytest.raises(UnsupportedSchemaError):
        compiler.compile_root({"$ref": "/api/_definitions.json#/$defs/Good"})
