"""Kubernetes parity for DRA selectors: compile_test.go's table, environments, list attributes.

dynamic-resource-allocation cel/compile_test.go is ported below with the
environments it runs each case in; the stored and new-expression environments
and KEP-5491's list-typed attributes follow cel/compile.go.
"""

import re
from typing import Any, Final

import pytest

from modelplane.cel import (
    CelCompileError,
    CelRuntimeError,
    compile_device_selector,
    device_from_spec,
    evaluate,
)
from modelplane.cel.versions import (
    BEFORE_LIST_ATTRIBUTES,
    STORED,
    parse_version,
    selector_environment,
)

# dynamic-resource-allocation cel/compile_test.go. Each case runs in the
# environments upstream runs it in: "stored" is StoredExpressions (no version),
# "1.35" NewExpressions without list-typed attributes, "1.36" with them.
# Devices carry what the case gives them; list values need a 1.36 device.
ALL: Final = ("stored", "1.35", "1.36")
LISTS: Final = ("stored", "1.36")
D: Final = "dra.example.com"


DRA_CASES: Final[list[tuple[str, tuple[str, ...], str, dict[str, Any], Any]]] = [
    # (name, environments, expression, device spec, match | "compile: ..." | "runtime: ...")
    ("true", ALL, "true", {}, True),
    ("false", ALL, "false", {}, False),
    ("syntax-error", ALL, "?!", {}, "compile: Syntax error"),
    ("type-error", ALL, "1", {}, "compile: must evaluate to bool or the unknown type, not int"),
    ("runtime-error-lookup-identifier", ALL,
     'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', {},
     "runtime: no such key: noSuchAttr"),
    ("runtime-error-lookup-map", ALL,
     'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', {},
     "runtime: no such key: noSuchAttr"),
    ("domain-check-negative", ALL, '"no-such-domain" in device.attributes', {}, False),
    ("domain-check-positive", ALL, '"dra.example.com" in device.attributes',
     {"attributes": {f"{D}/something": {"bool": True}}}, True),
    ("empty-driver-name", ALL, 'device.driver == ""', {}, True),
    ("real-driver-name", ALL, f'device.driver == "{D}"', {"driver": D}, True),
    ("driver-name-qualifier", ALL, f'device.attributes["{D}"].name',
     {"driver": D, "attributes": {"name": {"bool": True}}}, True),
    ("driver-name-qualifier-map-lookup", ALL, f'device.attributes["{D}"]["name"]',
     {"driver": D, "attributes": {"name": {"bool": True}}}, True),
    ("bind", ALL, f'cel.bind(dra, device.attributes["{D}"], dra.name)',
     {"driver": D, "attributes": {"name": {"bool": True}}}, True),
    ("qualified-attribute-name", ALL, 'device.attributes["other.example.com"].name',
     {"driver": D, "attributes": {"other.example.com/name": {"bool": True}}}, True),
    ("int", ALL, f'device.attributes["{D}"].name > 0',
     {"driver": D, "attributes": {"name": {"int": 1}}}, True),
    ("string", ALL, f'device.attributes["{D}"].name == "fish"',
     {"driver": D, "attributes": {"name": {"string": "fish"}}}, True),
    ("macro-compilation-error-new-expressions", ("1.35",),
     f'device.attributes["{D}"].ids.exists(id, id == 1)', {"driver": D},
     "compile: expression of type 'any' cannot be range of a comprehension"),
    ("macro-exists-on-int", LISTS, f'device.attributes["{D}"].name.exists(x, x > 0)',
     {"driver": D, "attributes": {"name": {"int": 1}}},
     "runtime: got 'types.Int', expected iterable type"),
    ("macro-exists-on-bool", LISTS, f'device.attributes["{D}"].name.exists(x, x == true)',
     {"driver": D, "attributes": {"name": {"bool": True}}},
     "runtime: got 'types.Bool', expected iterable type"),
    ("macro-exists-on-string", LISTS, f'device.attributes["{D}"].name.exists(x, x == "fish")',
     {"driver": D, "attributes": {"name": {"string": "fish"}}},
     "runtime: got 'types.String', expected iterable type"),
    ("macro-exists-on-version", LISTS,
     f'device.attributes["{D}"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
     {"driver": D, "attributes": {"name": {"version": "1.0.0"}}},
     "runtime: got 'cel.Semver', expected iterable type"),
    ("list-result-type-causes-match-error", ALL, f'device.attributes["{D}"].names',
     {"driver": D, "attributes": {"names": {"strings": ["fish", "bird"]}}},
     "runtime: CEL result of type list could not be converted to bool"),
    ("list-of-bool", ALL, f'device.attributes["{D}"].names.size() == 2',
     {"driver": D, "attributes": {"names": {"bools": [True, False]}}}, True),
    ("list-of-int", ALL, f'device.attributes["{D}"].names.size() == 2',
     {"driver": D, "attributes": {"names": {"ints": [1, 2]}}}, True),
    ("list-of-string", ALL, f'device.attributes["{D}"].names.size() == 2',
     {"driver": D, "attributes": {"names": {"strings": ["fish", "bird"]}}}, True),
    ("list-of-semver", ALL, f'device.attributes["{D}"].names.size() == 2',
     {"driver": D, "attributes": {"names": {"versions": ["1.0.0", "2.0.0"]}}}, True),
    ("macro-on-list-of-int", LISTS, f'device.attributes["{D}"].names.exists(x, x > 0)',
     {"driver": D, "attributes": {"names": {"ints": [1, 2]}}}, True),
    ("macro-on-list-of-string", LISTS, f'device.attributes["{D}"].names.all(x, x != "")',
     {"driver": D, "attributes": {"names": {"strings": ["fish", "bird"]}}}, True),
    ("macro-on-list-of-semver", LISTS,
     f'device.attributes["{D}"].names.all(x, x.isGreaterThan(semver("0.0.1")))',
     {"driver": D, "attributes": {"names": {"versions": ["1.0.0", "2.0.0"]}}}, True),
    ("includes-function-compilation-error", ("1.35",),
     f'device.attributes["{D}"].attr.includes("fish")', {"driver": D},
     "compile: undeclared reference to 'includes'"),
    ("includes-function-compilation-and-eval-success", LISTS,
     f'device.attributes["{D}"].attr.includes("fish")',
     {"driver": D, "attributes": {"attr": {"string": "fish"}}}, True),
    *(
        (f"includes-function-on-{kind}-{shape}-{sign}", LISTS,
         f'device.attributes["{D}"].name.includes({arg})',
         {"driver": D, "attributes": {"name": value}}, sign == "positive")
        for kind, shape, sign, arg, value in [
            ("bool", "scalar", "positive", "true", {"bool": True}),
            ("bool", "scalar", "negative", "true", {"bool": False}),
            ("bool", "list", "positive", "true", {"bools": [True, False]}),
            ("bool", "list", "negative", "false", {"bools": [True, True]}),
            ("int", "scalar", "positive", "1", {"int": 1}),
            ("int", "scalar", "negative", "1", {"int": 2}),
            ("int", "list", "positive", "1", {"ints": [1, 2]}),
            ("int", "list", "negative", "3", {"ints": [1, 2]}),
            ("string", "scalar", "positive", '"fish"', {"string": "fish"}),
            ("string", "scalar", "negative", '"bird"', {"string": "fish"}),
            ("string", "list", "positive", '"fish"', {"strings": ["fish", "bird"]}),
            ("string", "list", "negative", '"cat"', {"strings": ["fish", "bird"]}),
            ("semver", "scalar", "positive", 'semver("1.0.0")', {"version": "1.0.0"}),
            ("semver", "scalar", "negative", 'semver("2.0.0")', {"version": "1.0.0"}),
            ("semver", "list", "positive", 'semver("1.0.0")', {"versions": ["1.0.0", "2.0.0"]}),
            ("semver", "list", "negative", 'semver("3.0.0")', {"versions": ["1.0.0", "2.0.0"]}),
        ]
    ),
    ("includes-function-on-very-long-list-positive", LISTS,
     f'device.attributes["{D}"].name.includes("value-48")',
     {"driver": D, "attributes": {"name": {"strings": [f"value-{i}" for i in range(48)]}}},
     False),
    ("in-operator-on-list", ALL, f'1 in device.attributes["{D}"].names',
     {"driver": D, "attributes": {"names": {"ints": [1, 2, 3]}}}, True),
    ("version", ALL, f'device.attributes["{D}"].name.isGreaterThan(semver("0.0.1"))',
     {"driver": D, "attributes": {"name": {"version": "1.0.0"}}}, True),
    ("version_v", ALL,
     f'device.attributes["{D}"].name.isGreaterThan(semver("v0.0.1", true))'
     ' && isSemver("v1.0.0", true)',
     {"driver": D, "attributes": {"name": {"version": "1.0.0"}}}, True),
    ("quantity", ALL, f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
     {"driver": D, "capacity": {"name": {"value": "1Mi"}}}, True),
    ("check-positive", ALL,
     f'"name" in device.capacity["{D}"] && '
     f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
     {"driver": D, "capacity": {"name": {"value": "1Mi"}}}, True),
    ("check-negative", ALL,
     f'!("name" in device.capacity["{D}"]) || '
     f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))', {}, True),
    ("many", ALL,
     f'device.attributes["{D}"].a && device.attributes["{D}"].b && device.attributes["{D}"].c',
     {"driver": D, "attributes": {n: {"bool": True} for n in "abc"}}, True),
    ("check_attribute_domains", ALL, f'device.attributes.exists_one(x, x == "{D}")',
     {"driver": D, "attributes": {"services": {"string": "some_example_value"}}}, True),
    ("check_attribute_ids", ALL, f'device.attributes["{D}"].exists_one(x, x == "services")',
     {"driver": D, "attributes": {"services": {"string": "some_example_value"}}}, True),
    ("split_attribute", ALL, f'device.attributes["{D}"].services.split("example").size() >= 2',
     {"driver": D, "attributes": {"services": {"string": "some_example_value"}}}, True),
    ("regexp_attribute", ALL, f'device.attributes["{D}"].services.matches("[^a]?sym")',
     {"driver": D, "attributes": {"services": {"string": "asymetric"}}}, True),
    ("check_capacity_domains", ALL, f'device.capacity.exists_one(x, x == "{D}")',
     {"driver": D, "capacity": {"memory": {"value": "1Mi"}}}, True),
    ("check_capacity_ids", ALL, f'device.capacity["{D}"].exists_one(x, x == "memory")',
     {"driver": D, "capacity": {"memory": {"value": "1Mi"}}}, True),
    ("allow_multiple_allocations", ("stored", "1.35"), "device.allowMultipleAllocations == true",
     {"driver": D, "allowMultipleAllocations": True}, True),
    ("allow_multiple_allocations_default", ("stored", "1.35"),
     "device.allowMultipleAllocations == false", {"driver": D}, True),
]  # fmt: skip


def _dra_params() -> list[Any]:
    return [
        pytest.param(environment, expression, spec, expected, id=f"{name}[{environment}]")
        for name, environments, expression, spec, expected in DRA_CASES
        for environment in environments
    ]


@pytest.mark.parametrize(("environment", "expression", "spec", "expected"), _dra_params())
def test_dra_compile_test_table(
    environment: str, expression: str, spec: dict[str, Any], expected: Any
) -> None:
    version = None if environment == "stored" else environment
    device = device_from_spec(spec, kubernetes_version="1.36")
    if isinstance(expected, str) and expected.startswith("compile: "):
        with pytest.raises(CelCompileError, match=expected.removeprefix("compile: ")):
            compile_device_selector(expression, version)
        return
    selector = compile_device_selector(expression, version)
    if isinstance(expected, str):
        with pytest.raises(CelRuntimeError) as raised:
            selector.matches(device)
        assert expected.removeprefix("runtime: ") in str(raised.value)
        return
    assert selector.matches(device) is expected


def test_includes_refuses_lists_longer_than_the_device_limit() -> None:
    # includes-function-on-very-long-list-runtime-error: upstream builds a 49-value
    # list, which a 1.36 API server refuses to store; a dyn literal reaches the same code.
    values = ", ".join(f'"value-{i}"' for i in range(49))
    with pytest.raises(CelRuntimeError, match="cannot be applied to lists longer than 48"):
        evaluate(f'dyn([{values}]).includes("value-49")')


# The stored environment declares everything whatever the cluster's version;
# a version selects what its API server admits for a new selector.
@pytest.mark.parametrize(
    ("expression", "stored", "new_1_35"),
    [
        (f'device.attributes["{D}"].a.includes(1)', True, False),
        (f'device.attributes["{D}"].a.exists(x, x == 1)', True, False),
        (f'device.attributes["{D}"].a', True, True),  # attribute type: dyn, or any
        ("dyn(true)", True, False),  # dyn is not `any`: refused where attributes are `any`
        (f'device.attributes["{D}"].a == 1 && size(device.attributes["{D}"].a) > 0', True, True),
        ("device.allowMultipleAllocations", True, True),
    ],
)
def test_stored_and_new_expression_environments(
    expression: str, stored: bool, new_1_35: bool
) -> None:
    for version, compiles in ((None, stored), ("1.35", new_1_35), ("1.36", stored)):
        if compiles:
            compile_device_selector(expression, version)
        else:
            with pytest.raises(CelCompileError):
                compile_device_selector(expression, version)


def test_a_version_selects_an_environment() -> None:
    assert selector_environment(None) is STORED
    assert selector_environment("1.36") is STORED
    assert selector_environment("v1.37.2") is STORED
    assert selector_environment("1.35") is BEFORE_LIST_ATTRIBUTES
    assert selector_environment("1.31.0-alpha.1") is BEFORE_LIST_ATTRIBUTES
    assert parse_version(" 1.36 ") == (1, 36)
    for bad in ("", "1", "one.two", "1.36.x"):
        with pytest.raises(ValueError, match="not a Kubernetes version"):
            parse_version(bad)


@pytest.mark.parametrize(
    ("spec", "version", "problem"),
    [
        ({"attributes": {"a": {"ints": [1]}}}, None, "needs Kubernetes 1.36 or later"),
        ({"attributes": {"a": {"ints": [1]}}}, "1.35", "needs Kubernetes 1.36 or later"),
        ({"attributes": {"a": {"ints": [1, True]}}}, "1.36", 'attributes["a"].ints[1]'),
        ({"attributes": {"a": {"versions": ["v1"]}}}, "1.36", "invalid version"),
        ({"attributes": {"a": {"strings": "x"}}}, "1.36", "strings must be a list"),
        ({"attributes": {"a": {"ints": list(range(49))}}}, "1.36", "at most 48"),
        ({"attributes": {"a": {"int": 1, "ints": [1]}}}, "1.36", "exactly one of"),
        ({"driver": "d"}, "one", "not a Kubernetes version"),
    ],
)
def test_list_typed_attributes_need_a_1_36_cluster(
    spec: dict[str, Any], version: str | None, problem: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)):
        device_from_spec(spec, version)


def test_list_typed_attributes_are_cel_lists() -> None:
    device = device_from_spec(
        {"driver": D, "attributes": {"ids": {"ints": [3, 1]}, "v": {"versions": ["1.0.0"]}}},
        kubernetes_version="1.36",
    )
    selector = compile_device_selector(
        f'device.attributes["{D}"].ids.max() == 3 && device.attributes["{D}"].v[0].major() == 1'
    )
    assert selector.matches(device) is True
    other = device_from_spec(
        {"driver": D, "attributes": {"ids": {"ints": [1, 3]}, "v": {"versions": ["1.0.0"]}}},
        kubernetes_version="1.36",
    )
    assert other != device
    assert device == device_from_spec(
        {"driver": D, "attributes": {"ids": {"ints": [3, 1]}, "v": {"versions": ["1.0.0"]}}},
        kubernetes_version="1.37",
    )
