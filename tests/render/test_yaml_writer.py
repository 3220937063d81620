"""`-o yaml` is written by libyaml where that gives PyYAML's bytes, and by PyYAML elsewhere:
the output never depends on which one wrote it."""

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli import yamlio

OPTIONS: dict[str, Any] = {
    "sort_keys": True,
    "default_flow_style": False,
    "allow_unicode": True,
    "width": 1 << 16,
}
ASCII = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126))
AWKWARD = st.text(alphabet=" \n\t\r:#-'\"{}[]&*!|>%@`,?019.eE+aé\u2028\x85\ufeff")
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    ASCII,
    AWKWARD,
    st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
)
KEYS = st.one_of(ASCII, AWKWARD, st.just(""))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=25,
)
DOCUMENTS = st.lists(st.dictionaries(KEYS, VALUES, max_size=5), min_size=1, max_size=3)


@settings(max_examples=400, deadline=None)
@given(documents=DOCUMENTS)
def test_a_stream_is_what_pyyamls_own_writer_gives(documents: list[dict[str, Any]]) -> None:
    expected = yaml.dump_all(documents, Dumper=yaml.SafeDumper, explicit_start=True, **OPTIONS)
    assert yamlio.dump_all(documents) == expected


@settings(max_examples=200, deadline=None)
@given(document=st.dictionaries(KEYS, VALUES, max_size=5))
def test_one_document_is_what_pyyamls_own_writer_gives(document: dict[str, Any]) -> None:
    assert yamlio.dump(document) == yaml.dump(document, Dumper=yaml.SafeDumper, **OPTIONS)


def test_kubernetes_objects_are_written_by_libyaml() -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "labels": {"a": "b"}},
        "data": {"script": "#!/bin/sh\n\techo 'hi'\n", "n": 3, "f": 1.5, "t": True, "z": None},
    }
    assert issubclass(yamlio.dumper_for([manifest]), yaml.CSafeDumper)  # pyright: ignore[reportAttributeAccessIssue]
    assert yamlio.dumper_for([{"": 1}]) is yaml.SafeDumper
    assert yamlio.dumper_for([{"k": "caf\u00e9"}]) is yaml.SafeDumper


def test_a_dict_or_list_met_twice_is_an_alias_as_pyyaml_writes_it() -> None:
    shared = {"b": [1, 2.5, None, True], "a": "x"}
    listed = ["p", "q"]
    documents: list[dict[str, Any]] = [
        {"one": shared, "two": shared, "l1": listed, "l2": listed, "e": {}, "f": []},
        {"again": shared, "float": 1e17},
    ]
    written = yamlio.dump_all(documents)
    assert "&id001" in written
    assert written == yaml.dump_all(
        documents, Dumper=yaml.SafeDumper, explicit_start=True, **OPTIONS
    )
