"""`yamlio`'s loader builds plain documents in one walk and leaves everything else
(aliases, merge keys, other tags, repeated keys) to PyYAML's constructor: either way
the values are what PyYAML's safe loader (timestamps kept as strings) gives, and the
errors are the constructor's."""

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli import yamlio


class Reference(yaml.SafeLoader):
    """PyYAML's safe loader, resolving timestamps as strings like Kubernetes."""

    yaml_implicit_resolvers = {  # noqa: RUF012 - PyYAML's own class attribute
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


def reference(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=Reference))


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(),
    st.sampled_from(["2024-01-02", "1:20", "0x1F", "0o17", ".inf", "~", "yes", "=", "<<"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=25,
)
STYLES = st.sampled_from([False, True, None])


@settings(max_examples=100, deadline=None)
@given(documents=st.lists(VALUES, min_size=1, max_size=3), flow=STYLES)
def test_documents_load_as_pyyamls_safe_loader_loads_them(
    documents: list[Any], flow: bool | None
) -> None:
    text = yaml.safe_dump_all(documents, default_flow_style=flow, allow_unicode=True)
    assert yamlio.load_all(text) == reference(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: &x {b: [1, 2]}\nc: *x\n",
        "base: &b {x: 1, y: 2}\nmerged:\n  <<: *b\n  y: 3\n",
        "a: !!binary aGk=\nb: !!set {x, y}\nc: !!str 1\nd: !!float 1\ne: !!timestamp 2024-01-02\n",
        "a: !!omap [x: 1, y: 2]\nb: !!pairs [x: 1, x: 2]\n",
        "when: 2024-01-02T03:04:05Z\nn: ~\nt: yes\ni: 0x1F\nf: 1e3\n",
        "? [a, b]\n: 1\n",
        "---\n---\na: 1\n...\n",
        # Keys spelled apart that build equal: not repeated, the last one stands.
        "1: a\n0x1: b\n",
        "m: {1: a, 1.0: b, true: c}\n",
    ],
)
def test_what_the_walk_leaves_to_the_constructor_loads_as_pyyaml_loads_it(text: str) -> None:
    try:
        expected = reference(text)
    except yaml.YAMLError:
        with pytest.raises(yamlio.YAMLError):
            yamlio.load_all(text)
    else:
        assert yamlio.load_all(text) == expected


def test_an_alias_is_one_value_as_the_constructor_makes_it() -> None:
    [document] = yamlio.load_all("a: &x {b: 1}\nc: *x\n")
    assert document["a"] is document["c"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("a: 1\na: 2\n", '<input>:2: key "a" already set in map'),
        # The constructor checks a mapping's keys before any nested mapping's.
        ("a:\n  p: {x: 1, x: 2}\nc: {y: 1, y: 2}\n", '<input>:3: key "y" already set in map'),
        ("a: [1, {b: 1, b: 2}]\n", '<input>:1: key "b" already set in map'),
        ("a: !!nope 1\n", "<input>:1: could not determine a constructor for the tag"),
        ("? [a, b]\n: 1\n", "<input>:1: while constructing a mapping, found unhashable key"),
    ],
)
def test_a_repeated_key_or_a_bad_node_is_the_constructors_error(text: str, error: str) -> None:
    with pytest.raises(yamlio.YAMLError) as raised:
        yamlio.load_all(text)
    assert str(raised.value).startswith(error)


def test_a_document_deeper_than_the_walk_goes_is_built_by_the_constructor() -> None:
    depth = 900
    [value] = yamlio.load_all("[" * depth + "]" * depth)
    for _ in range(depth - 1):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]  # pyright: ignore[reportUnknownVariableType]
    assert value == []
