"""General CEL semantics as cel-go evaluates them with the Kubernetes options."""

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane.cel import CelCompileError, CelError, CelRuntimeError, Quantity, Semver, evaluate
from modelplane_cli.schema.cel_rules import compile_rule


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        # Arithmetic and overflow.
        ("1 + 2 * 3", 7),
        ("-7 / 2", -3),
        ("-7 % 2", -1),
        ("7u / 2u", 3),
        ("1.0 / 0.0", float("inf")),
        ("-9223372036854775808", -(2**63)),
        ("0x1F + 1", 32),
        ("'ab' + 'c'", "abc"),
        ("[1] + [2, 3]", [1, 2, 3]),
        # Kubernetes turns on cross-type numeric ordering.
        ("1 < 2.5", True),
        ("2.5 > 1", True),
        ("1u < 2", True),
        ("3 >= 2u", True),
        # Runtime equality is heterogeneous: numbers compare by value.
        ("dyn(1) == 1.0", True),
        ("dyn(1u) == 1", True),
        ("dyn(1) == 'a'", False),
        ("[1, 2] == [1, 2]", True),
        ("{'a': 1} == {'a': 1}", True),
        ("null == null", True),
        # Short-circuit logic with CEL's commutative error rules.
        ("false && 1 / 0 == 1", False),
        ("1 / 0 == 1 && false", False),
        ("1 / 0 == 1 || true", True),
        ("true || 1 / 0 == 1", True),
        ("true ? 1 : 1 / 0", 1),
        # Macros.
        ("[1, 2, 3].all(x, x > 0)", True),
        ("[1, 2, 3].exists(x, x > 2)", True),
        ("[1, 2, 3].exists_one(x, x > 1)", False),
        ("[1, 2, 3].map(x, x * 2)", [2, 4, 6]),
        ("[1, 2, 3].map(x, x > 1, x * 10)", [20, 30]),
        ("[1, 2, 3].filter(x, x % 2 == 1)", [1, 3]),
        ("{'a': 1, 'b': 2}.all(k, k != 'c')", True),
        ("[0, 1].exists(x, 1 / x == 1)", True),
        ("[1, 0].all(x, 1 / x == 5)", False),
        ("cel.bind(x, [1, 2], x + x)", [1, 2, 1, 2]),
        ("has({'a': 1}.a) && !has({'a': 1}.b)", True),
        # Maps and lists.
        ("{'a': 1}['a']", 1),
        ("{1: 'a'}[dyn(1.0)]", "a"),
        ("2 in [1, 2]", True),
        ("'b' in {'a': 1}", False),
        ("size({'a': 1, 'b': 2})", 2),
        ("[1, 2].size()", 2),
        # Strings.
        ("size('héllo')", 5),
        ("'hello'.contains('ell') && 'hello'.startsWith('he') && 'hello'.endsWith('lo')", True),
        ("'asymetric'.matches('[^a]?sym')", True),
        ("'a,b,c'.split(',')", ["a", "b", "c"]),
        ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
        ("'abc'.split('')", ["a", "b", "c"]),
        ("['a', 'b'].join('-')", "a-b"),
        ("'Hello'.lowerAscii() + 'Hello'.upperAscii()", "helloHELLO"),
        ("' x '.trim()", "x"),
        # strings.TrimSpace strips Go's unicode.IsSpace, not the separators U+001C-U+001F.
        ("'\\x1c\\x1fa\\u3000\\u0085'.trim()", "\x1c\x1fa"),
        ("'\\u00a0\\u2000a\\u202f\\t'.trim()", "a"),
        # `\C` inside a quotation is the text `\C`; an escaped backslash is one.
        ("'a\\\\C'.matches(dyn('a\\\\Q\\\\C\\\\E'))", True),
        ("'\\\\C'.matches(dyn('\\\\\\\\C'))", True),
        ("'banana'.replace('a', 'o', 2)", "bonona"),
        ("'héllo'.substring(1, 3)", "él"),
        ("'héllo'.charAt(1)", "é"),
        ("'hello'.indexOf('l')", 2),
        ("'hello'.lastIndexOf('l')", 3),
        ("'abc 123 def 456'.find('[0-9]+')", "123"),
        ("'abc 123 def 456'.findAll('[0-9]+')", ["123", "456"]),
        ("'abc'.find('x')", ""),
        # Lists library.
        ("[1, 2, 3].isSorted() && ![2, 1].isSorted()", True),
        ("[1, 2, 3].sum()", 6),
        ("[3, 1, 2].min()", 1),
        ("[3, 1, 2].max()", 3),
        ("[1, 2, 1].indexOf(1)", 0),
        ("[1, 2, 1].lastIndexOf(1)", 2),
        # Conversions.
        ("int('-12')", -12),
        ("int(2.9)", 2),
        ("uint(3)", 3),
        ("double('1e3')", 1000.0),
        ("string(1.5)", "1.5"),
        ("string(1e6)", "1e+06"),
        ("string(0.00001)", "1e-05"),
        ("string(true)", "true"),
        ("bool('t')", True),
        ("bytes('a') == b'a'", True),
        ("type(1) == int && type('a') == string", True),
        ("type(quantity('1'))", "kubernetes.Quantity"),
        ("duration('90m').getHours()", 1),
        ("timestamp('2024-02-29T12:00:00Z').getFullYear()", 2024),
        ("timestamp('2024-01-01T00:00:00Z') + duration('24h') > timestamp('2024-01-01T01:00:00Z')",
         True),
    ],
)  # fmt: skip
def test_evaluates(expression: str, expected: Any) -> None:
    assert evaluate(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("9223372036854775807 + 1", "integer overflow"),
        ("-9223372036854775807 - 2", "integer overflow"),
        ("0u - 1u", "unsigned integer overflow"),
        ("1 / 0", "division by zero"),
        ("1 % 0", "modulus by zero"),
        ("{'a': 1}.b", "no such key: b"),
        ("{'a': 1}['b']", "no such key: b"),
        ("[1, 2][2]", "index '2' out of range in list size '2'"),
        ("true && 1 / 0 == 1", "division by zero"),
        ("[1, 0].exists_one(x, 1 / x == 1)", "division by zero"),
        ("[0, 1].all(x, 1 / x == 1)", "division by zero"),
        ("dyn(1) && true", "no such overload"),
        ("dyn(1) ? 1 : 2", "no such overload"),
        ("dyn(1) < 'a'", "no such overload"),
        ("dyn(semver('1.0.0')) == 1", "no such overload"),
        ("dyn('ab').exists(c, c == 'a')", "got 'types.String', expected iterable type"),
        ("{'a': 1, 'a': 2}.size() == 1", "repeated key"),
        ("int('1.5')", "type conversion error"),
        ("int(1e19)", "integer overflow"),
        ("[].min()", "min called on empty list"),
        ("'abc'.substring(2, 1)", "invalid substring range"),
        ("'abc'.charAt(4)", "index out of range: 4"),
        ("'a'.matches(dyn('('))", "invalid regular expression"),
        # C++ RE2 reads `\C` as any byte; Go's regexp/syntax refuses it.
        ("'a'.matches(dyn('\\\\C'))", "invalid escape sequence"),
        ("'a'.find(dyn('a|\\\\C'))", "invalid escape sequence"),
    ],
)
def test_runtime_errors(expression: str, message: str) -> None:
    with pytest.raises(CelRuntimeError) as raised:
        evaluate(expression)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 == 1.0", "found no matching overload for '_==_' applied to '(int, double)'"),
        ("'a' < 1", "found no matching overload for '_<_'"),
        ("1 + 1.0", "found no matching overload for '_+_'"),
        ("-1u", "found no matching overload for '-_'"),
        ("!1", "found no matching overload for '!_'"),
        ("1 && true", "found no matching overload for '_&&_'"),
        ("1 ? 2 : 3", "found no matching overload for '_?_:_'"),
        ("true ? 1 : 'a'", "found no matching overload for '_?_:_'"),
        ("[1, 'a']", "expected type 'int' but found 'string'"),
        ("{'a': 1, 'b': 'x'}", "expected type 'int' but found 'string'"),
        ("'ab'.exists(c, c == 'a')", "cannot be range of a comprehension"),
        ("[1].all(x, x)", "found no matching overload for '_&&_'"),
        ("[1].all(1, true)", "argument must be a simple name"),
        ("x + 1", "undeclared reference to 'x'"),
        ("device.driver", "undeclared reference to 'device'"),
        ("[1].reduce(a, b, 0, a + b)", "undeclared reference to 'reduce'"),
        ("'a'.size(1)", "found no matching overload for 'size'"),
        ("(1).size()", "found no matching overload for 'size'"),
        ("1. + 2.", "invalid float literal"),
        ("9223372036854775808", "invalid int literal"),
        ("18446744073709551616u", "invalid uint literal"),
        ("Foo{a: 1}", "message construction is not supported"),
        ("ip('1.2.3.4').family() == 4", "Modelplane does not support"),
        ("[1].transformList(i, v, v)", "Modelplane does not support"),
        ("a.?b", "Syntax error"),
        # Kubernetes validates literal arguments when the expression is written (1.29+).
        ("'a'.matches('(')", "invalid matches argument"),
        ("'a'.matches('\\\\C')", "invalid matches argument"),
        ("duration('1d') > duration('1h')", "invalid duration argument"),
        ("timestamp('2024-02-30T00:00:00Z') != timestamp(0)", "invalid timestamp argument"),
        ("[1, dyn(2)]", "expected type 'int' but found 'dyn'"),
    ],
)
def test_compile_errors(expression: str, message: str) -> None:
    with pytest.raises(CelCompileError) as raised:
        evaluate(expression)
    assert message in str(raised.value)


def test_results_are_python_values() -> None:
    assert evaluate('quantity("1.5Gi")') == Quantity.parse("1536Mi")
    assert str(evaluate('quantity("1.5Gi")')) == "1536Mi"
    assert isinstance(evaluate('quantity("1").add(1)'), Quantity)
    assert evaluate('semver("1.0.0-rc.1")') == Semver.parse("1.0.0-rc.1")
    assert type(evaluate("1u")) is int
    assert evaluate("{'a': [1u]}") == {"a": [1]}
    assert evaluate("type(1)") == "int"
    assert evaluate("{'k': [type('a')]}") == {"k": ["string"]}


_TOKENS = st.sampled_from(
    [
        *("1", "2u", "1.5", "'a'", "b'x'", "true", "null", "[", "]", "{", "}", "(", ")", ","),
        *(":", "+", "-", "*", "/", "%", "==", "<", "&&", "||", "!", "?", ".", " in ", "x"),
        *("size", "quantity('1Ki')", "semver('1.0.0')", ".all(v, v)", ".map(v, v)", "has("),
        *("dyn(", "cel.bind(v, 1, v)", ".compareTo(", ".add(", "int(", "string(", "'a'.split('')"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TOKENS, min_size=1, max_size=12).map("".join))
def test_never_raises_anything_but_cel_errors(expression: str) -> None:
    with contextlib.suppress(CelError):
        evaluate(expression)


def test_literals_mixing_a_rule_self_with_typed_values_compile() -> None:
    # A CRD rule's `self` is typed by its schema upstream and dyn here: the
    # homogeneous-literal check cannot tell, so it lets dyn join there, and only there.
    assert compile_rule("[self.replicas, 1].all(x, x > 0)").program is not None
    assert compile_rule("[self.name, 1].size() == 2").program is not None
    with pytest.raises(CelCompileError, match="expected type 'dyn' but found 'int'"):
        evaluate("[dyn(1), 1].size() == 2")
