"""DRA device selectors, after k8s.io/dynamic-resource-allocation cel/compile_test.go."""

from typing import Any

import pytest

from modelplane.cel import (
    CelCache,
    CelCompileError,
    CelRuntimeError,
    Device,
    Quantity,
    Semver,
    compile_device_selector,
    device_from_spec,
)
from modelplane.cel import selector as selector_module
from modelplane.cel.environment import Program, compile_program

DRIVER = "dra.example.com"


def device(**spec: Any) -> Device:
    return device_from_spec({"driver": DRIVER, **spec})


FULL = device(
    attributes={
        "bool": {"bool": True},
        "int": {"int": 1},
        "string": {"string": "fish"},
        "version": {"version": "1.0.0"},
        "services": {"string": "some_example_value"},
        "other.example.com/name": {"bool": True},
    },
    capacity={"quantity": {"value": "1Mi"}, "memory": "1Mi"},
)
EMPTY = device_from_spec({})

_ALL = " && ".join(
    [
        'device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki"))',
        'device.attributes["dra.example.com"].bool',
        'device.attributes["dra.example.com"].int > 0',
        'device.attributes["dra.example.com"].string == "fish"',
        'device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1"))',
        'device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki"))',
        'device.attributes["dra.example.com"]["bool"]',
        'device.attributes["dra.example.com"]["int"] > 0',
        'device.attributes["dra.example.com"]["string"] == "fish"',
        'device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))',
    ]
)


@pytest.mark.parametrize(
    ("expression", "target", "expected"),
    [
        ("true", EMPTY, True),
        ("false", EMPTY, False),
        ('"no-such-domain" in device.attributes', EMPTY, False),
        ('"dra.example.com" in device.attributes', FULL, True),
        ('device.driver == ""', EMPTY, True),
        ('device.driver == "dra.example.com"', FULL, True),
        ('device.attributes["dra.example.com"].bool', FULL, True),
        ('device.attributes["dra.example.com"]["bool"]', FULL, True),
        ('cel.bind(dra, device.attributes["dra.example.com"], dra.bool)', FULL, True),
        ('device.attributes["other.example.com"].name', FULL, True),
        ('device.attributes["dra.example.com"].int > 0', FULL, True),
        ('device.attributes["dra.example.com"].string == "fish"', FULL, True),
        ('device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1"))', FULL, True),
        (
            'device.attributes["dra.example.com"].version.isGreaterThan(semver("v0.0.1", true))'
            ' && isSemver("v1.0.0", true)',
            FULL,
            True,
        ),
        ('device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki"))', FULL, True),
        (
            '"quantity" in device.capacity["dra.example.com"]'
            ' && device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki"))',
            FULL,
            True,
        ),
        (
            '!("name" in device.capacity["dra.example.com"])'
            ' || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
            EMPTY,
            True,
        ),
        (_ALL, FULL, True),
        ('device.attributes.exists_one(x, x == "dra.example.com")', FULL, True),
        ('device.attributes["dra.example.com"].exists_one(x, x == "services")', FULL, True),
        ('device.capacity.exists_one(x, x == "dra.example.com")', FULL, True),
        (
            'device.attributes["dra.example.com"].services.split("example").size() >= 2',
            FULL,
            True,
        ),
        ('device.attributes["dra.example.com"].services.matches("[^a]?ex")', FULL, True),
        ("device.allowMultipleAllocations == false", FULL, True),
        ('device.attributes["dra.example.com"].version.includes(semver("1.0.0"))', FULL, True),
        ('device.attributes["dra.example.com"].string.includes("bird")', FULL, False),
        ('has(device.attributes["dra.example.com"].bool)', FULL, True),
        ('has(device.attributes["nowhere"].bool)', FULL, False),
        ('size(device.attributes["nowhere"]) == 0', FULL, True),
    ],
)
def test_selector_matches(expression: str, target: Device, expected: bool) -> None:
    assert compile_device_selector(expression).matches(target) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("?!", "Syntax error"),
        ("1", "must evaluate to bool or the unknown type, not int"),
        ('"fish"', "must evaluate to bool or the unknown type, not string"),
        ("1 + 2", "must evaluate to bool or the unknown type, not int"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        (
            'device.capacity["d"].memory',
            "must evaluate to bool or the unknown type, not kubernetes.Quantity",
        ),
        ('quantity("1")', "not kubernetes.Quantity"),
        ("device.noSuchField", "undefined field 'noSuchField'"),
        ("device.allowMultipleAllocations.x", "does not support field selection"),
        ("devices.driver == ''", "undeclared reference to 'devices'"),
        ("frobnicate(device.driver)", "undeclared reference to 'frobnicate'"),
        ("isQuantity([1, 2, 3])", "found no matching overload for 'isQuantity'"),
        ('quantity("1").sign() == 1', "found no matching overload for 'sign'"),
        ("device.driver == 1", "found no matching overload for '_==_'"),
        ("device.attributes[1].x", "found no matching overload for '_[_]'"),
        ('[1, "a"].size() == 2', "expected type 'int' but found 'string'"),
        ('has(device.attributes["d"]["x"])', "invalid argument to has() macro"),
        ('device.driver.exists(c, c == "d")', "cannot be range of a comprehension"),
        ('url("https://x").getHost() == "x"', "does not support"),
    ],
)
def test_compile_errors(expression: str, message: str) -> None:
    with pytest.raises(CelCompileError) as raised:
        compile_device_selector(expression)
    assert message in str(raised.value)


_DRA = 'device.attributes["dra.example.com"]'
_NOWHERE = 'device.attributes["no-such-domain"]'


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        (f"{_NOWHERE}.noSuchAttr.isGreaterThan(quantity('0'))", "no such key: noSuchAttr"),
        (f"{_NOWHERE}['noSuchAttr'].isGreaterThan(quantity('0'))", "no such key: noSuchAttr"),
        (f"{_DRA}.int.exists(x, x > 0)", "got 'types.Int', expected iterable type"),
        (f"{_DRA}.bool.exists(x, x == true)", "got 'types.Bool', expected iterable type"),
        (f"{_DRA}.string.exists(x, x == 'f')", "got 'types.String', expected iterable type"),
        (f"{_DRA}.version.exists(x, x.isGreaterThan(semver('0.0.1')))", "got 'cel.Semver'"),
        (f"{_DRA}.string", "CEL result of type string could not be converted to bool"),
        ('sign(quantity("8O Gi")) == 0', "quantities must match the regular expression"),
        ('semver("1.0") == semver("1.0.0")', "No Major.Minor.Patch elements found"),
        (f"{_DRA}.string > 1", "no such overload"),
    ],
)
def test_runtime_errors(expression: str, message: str) -> None:
    selector = compile_device_selector(expression)
    with pytest.raises(CelRuntimeError) as raised:
        selector.matches(FULL)
    assert message in str(raised.value)


def test_a_cache_compiles_once_and_is_its_owners_alone() -> None:
    expression = 'device.driver == "cache-probe.example.com"'
    cache = CelCache()
    assert cache.selector(expression) is cache.selector(expression)
    assert CelCache().selector(expression) is not cache.selector(expression)
    assert compile_device_selector(expression) is not compile_device_selector(expression)


def _counting_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    compiled: list[str] = []

    def counting(expression: str, *args: Any, **options: Any) -> Program:
        compiled.append(expression)
        return compile_program(expression, *args, **options)

    monkeypatch.setattr(selector_module, "compile_program", counting)
    return compiled


def test_compile_errors_are_cached_and_raised_again(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _counting_compiles(monkeypatch)
    cache = CelCache()
    for _ in range(3):
        with pytest.raises(CelCompileError, match="undefined field 'nope'"):
            cache.selector("device.nope == 1")
    assert compiled == ["device.nope == 1"]


def test_a_cache_keeps_its_most_recently_used(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _counting_compiles(monkeypatch)
    cache = CelCache(size=2)
    for expression in ("true", "false", "true", "1 == 1", "true", "false"):
        cache.evaluate(expression)
    # "false" was the least recently used when "1 == 1" came in.
    assert compiled == ["true", "false", "1 == 1", "false"]


def test_expression_length_limit() -> None:
    padding = " " * (10 * 1024)
    with pytest.raises(CelCompileError, match="too long"):
        compile_device_selector("true" + padding)


def test_nesting_limit() -> None:
    with pytest.raises(CelCompileError, match="nesting"):
        compile_device_selector("!" * 300 + "true")
    assert compile_device_selector("!" * 200 + "true").matches(EMPTY)
    # Brackets are bounded before parsing (parsing time grows with them), even those
    # that build no CEL node; inside strings they are text.
    assert compile_device_selector("(" * 32 + "true" + ")" * 32).matches(EMPTY)
    with pytest.raises(CelCompileError, match="nesting exceeds the limit of 32 brackets"):
        compile_device_selector("(" * 33 + "true" + ")" * 33)
    with pytest.raises(CelCompileError, match="nesting exceeds the limit of 32 brackets"):
        compile_device_selector("[" * 300 + "]" * 300 + " == []")
    assert compile_device_selector("'" + "(" * 300 + "' != ''").matches(EMPTY)


_TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"


def _nested(levels: int, size: str = _TEN) -> str:
    """`levels` comprehensions over a list literal, each inside the one before."""
    expression = "true"
    for level in range(levels):
        expression = f"{size}.all(x{level}, {expression})"
    return expression


@pytest.mark.parametrize(
    "expression",
    [
        # rev-cel F3: `||` decides on the left when run, but cel-go estimates both
        # sides, and seven nested ten-element ranges are over 10^7 iterations.
        f'device.driver == "{DRIVER}" || {_nested(7)}',
        _nested(7),
        f"{_nested(3)} && {_nested(3)} && {_nested(7)}",
        # A conditional is estimated by its dearer branch.
        f"false ? {_nested(7)} : true",
        f"{_TEN}.map(x, {_nested(6)}).size() > 0",
        f"{{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 10: 10}}.all(k, {_nested(6)})",
        # final-t-b F4: cel-go estimates 1,366,673 (tests/cel/test_estimate.py).
        f"[1, 2, 3].all(y, {_nested(5)})",
    ],
)
def test_the_api_servers_cost_estimate_refuses_what_may_cost_over_its_limit(
    expression: str,
) -> None:
    for version in ("1.34", "1.36"):
        with pytest.raises(CelCompileError, match="too complex, exceeds cost limit"):
            compile_device_selector(expression, version)
    # The kube-scheduler runs a stored one, and its run-time limit cuts it off.
    assert compile_device_selector(expression).cost_error is not None


@pytest.mark.parametrize(
    "expression",
    [
        # cel-go estimates 455,551 for five levels (11 + 10 x (3 + the level within)):
        # the API server admits it.
        _nested(5),
        f"{_nested(3)} || {_nested(3)}",
        # A range of unknown size counts for nothing here; cel-go sizes an attribute
        # map at 32 entries, so it estimates about 14,500 for this.
        'device.attributes["dra.example.com"].all(k, ' + _nested(2) + ")",
    ],
)
def test_the_cost_floor_refuses_nothing_the_api_server_admits(expression: str) -> None:
    assert compile_device_selector(expression, "1.34").matches(FULL)


class TestDeviceFromSpec:
    def test_inference_class_shape(self) -> None:
        spec = {
            "name": "gpu",
            "claim": "DRA",
            "driver": "gpu.nvidia.com",
            "count": 8,
            "attributes": {
                "architecture": {"string": "Hopper"},
                "cudaComputeCapability": {"version": "9.0.0"},
                "cores": {"int": 132.0},
                "example.com/fabric": {"bool": True},
            },
            "capacity": {"memory": {"value": "81559Mi"}, "example.com/bandwidth": "400G"},
            "allowMultipleAllocations": True,
        }
        assert device_from_spec(spec) == Device(
            driver="gpu.nvidia.com",
            attributes=(
                ("example.com", "fabric", True),
                ("gpu.nvidia.com", "architecture", "Hopper"),
                ("gpu.nvidia.com", "cores", 132),
                ("gpu.nvidia.com", "cudaComputeCapability", Semver.parse("9.0.0")),
            ),
            capacity=(
                ("example.com", "bandwidth", Quantity.parse("400G")),
                ("gpu.nvidia.com", "memory", Quantity.parse("81559Mi")),
            ),
            allow_multiple_allocations=True,
        )

    def test_capacity_reaches_cel_as_the_api_server_stores_it(self) -> None:
        stored = device(capacity={"memory": "1.5Gi"})
        assert compile_device_selector(
            'device.capacity["dra.example.com"].memory.isInteger()'
        ).matches(stored)

    def test_devices_that_cel_tells_apart_are_not_equal(self) -> None:
        assert device(attributes={"a": {"bool": True}}) != device(attributes={"a": {"int": 1}})
        assert device(capacity={"m": "1Ki"}) != device(capacity={"m": "1024"})
        assert hash(device(capacity={"m": "1Ki"})) == hash(device(capacity={"m": "1Ki"}))

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ({"capacity": {"memory": {"value": "8O Gi"}}}, 'invalid quantity "8O Gi"'),
            ({"capacity": {"memory": True}}, "must be a quantity string"),
            ({"attributes": {"v": {"version": "9.0"}}}, 'invalid version "9.0"'),
            ({"attributes": {"v": {"string": "a", "int": 1}}}, "must set exactly one"),
            ({"attributes": {"v": {"int": 1.5}}}, "int must be a 64-bit integer"),
            ({"attributes": {"v": {"bool": "yes"}}}, "bool value has the wrong type"),
            ({"attributes": {"v": "plain"}}, 'attributes["v"]: must be an object'),
            ({"attributes": {"a": {"int": 1}, "dra.example.com/a": {"int": 2}}}, "twice"),
            ({"driver": 5}, "driver: must be a string"),
            ({"allowMultipleAllocations": "yes"}, "allowMultipleAllocations: must be a boolean"),
        ],
    )
    def test_invalid_specs_name_the_field(self, spec: dict[str, Any], message: str) -> None:
        with pytest.raises(ValueError) as raised:
            device_from_spec({"driver": DRIVER, **spec})
        assert message in str(raised.value)
        field = next(iter(spec))
        assert str(raised.value).startswith(field)
