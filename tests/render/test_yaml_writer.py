"""`-o yaml` is written by `yaml_writer` directly, byte for byte what PyYAML's own safe
dumper writes (the oracle here), and reads back as the documents written; what the
writer leaves to PyYAML (aliases, `? key` keys, other types) is written by PyYAML."""

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli import yaml_writer, yamlio

OPTIONS: dict[str, Any] = {
    "sort_keys": True,
    "default_flow_style": False,
    "allow_unicode": True,
    "width": 1 << 16,
}
ASCII = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126))
AWKWARD = st.text(alphabet=" \n\t\r:#-'\"{}[]&*!|>%@`,?019.eE+aé\u2028\x85\ufeff")
# Strings that look like other scalars, or start like YAML syntax, in any case.
LOOKALIKES = st.sampled_from(
    [
        "", "~", "null", "Null", "NULL", "true", "False", "yes", "No", "on", "OFF", "y", "n",
        "0", "-1", "+1", "012", "0x1F", "0o17", "0b101", "1_000", "1:20", "1.5", ".5", "1e3",
        "1.0e+3", ".inf", "-.Inf", ".NaN", "2024-01-02", "2024-01-02T03:04:05Z",
        "2001-12-14 21:59:43.10 -5", "<<", "=", "---", "...", "--- x", "- x", "-x", "? x",
        ": x", "a: b", "a:b", "a #b", "a#b", "#a", "&a", "*a", "!a", "|", ">", "%a", "@a",
        "`a", "'a", '"a', "a'", "a ", " a", "a:", "a\n", "\na", "a\n b", "a \nb", "a\n\nb",
        "é", "a\u2028b", "\ufeff", "\x00", "\x7f", "\U0001f600", "a\tb",
    ]
)  # fmt: skip
STRINGS = st.one_of(
    ASCII,
    AWKWARD,
    LOOKALIKES,
    st.text(alphabet=st.characters(blacklist_categories=("Cs",))),
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), STRINGS)
KEYS = st.one_of(ASCII, AWKWARD, LOOKALIKES)
# Keys PyYAML writes as `key:` (not `? key`): non-empty, one line, short.
SIMPLE_KEYS = KEYS.filter(
    lambda k: 0 < len(k) < 100 and not any(c in k for c in "\n\x85\u2028\u2029")
)


def values(keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)
        ),
        max_leaves=25,
    )


DOCUMENTS = st.lists(st.dictionaries(KEYS, values(KEYS), max_size=5), min_size=1, max_size=3)
SIMPLE_DOCUMENTS = st.lists(
    st.dictionaries(SIMPLE_KEYS, values(SIMPLE_KEYS), max_size=5), min_size=1, max_size=3
)


# PyYAML writes a NEL, LS or PS character in single quotes as a line break, which its
# reader folds like one (to a space or nothing): the bytes are PyYAML's, but such a
# string does not read back. Kubernetes objects render writes hold none.
_UNICODE_BREAKS = ("\x85", "\u2028", "\u2029")


def reads_back(written: str, documents: list[dict[str, Any]]) -> bool:
    if any(c in _strings(documents) for c in _UNICODE_BREAKS):
        return True
    return yamlio.load_all(written) == documents


def _strings(value: Any) -> str:
    if isinstance(value, dict):
        return "".join(_strings(k) + _strings(v) for k, v in value.items())  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return "".join(_strings(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return value if isinstance(value, str) else ""


def pyyaml_all(documents: list[dict[str, Any]]) -> str:
    return yaml.dump_all(documents, Dumper=yaml.SafeDumper, explicit_start=True, **OPTIONS)


@settings(max_examples=150, deadline=None)
@given(documents=SIMPLE_DOCUMENTS)
def test_the_writer_writes_what_pyyaml_writes(documents: list[dict[str, Any]]) -> None:
    written = yaml_writer.Writer().write(documents, explicit_start=True)
    assert written == pyyaml_all(documents)
    assert reads_back(written, documents)


@settings(max_examples=150, deadline=None)
@given(documents=DOCUMENTS)
def test_a_stream_is_what_pyyamls_own_writer_gives(documents: list[dict[str, Any]]) -> None:
    written = yamlio.dump_all(documents)
    assert written == pyyaml_all(documents)
    assert reads_back(written, documents)


@settings(max_examples=100, deadline=None)
@given(document=st.dictionaries(KEYS, values(KEYS), max_size=5))
def test_one_document_is_what_pyyamls_own_writer_gives(document: dict[str, Any]) -> None:
    assert yamlio.dump(document) == yaml.dump(document, Dumper=yaml.SafeDumper, **OPTIONS)


def test_one_writer_gives_the_same_text_at_every_place_a_string_is_met() -> None:
    # The cache of a string's text must not leak one position's text into another.
    text = "first line\nsecond 'line'"
    document: dict[str, Any] = {
        "a": text,
        "b": [text, {"c": text, "d": [[text]]}],
        "long-key-" * 10: text,
        "deep": {"e": {"f": {"g": text, "h": [{"i": text}]}}},
    }
    writer = yaml_writer.Writer()
    for _ in range(2):
        assert writer.write([document, document], explicit_start=True) == pyyaml_all(
            [document, document]
        )
        assert writer.write([document], explicit_start=False) == yaml.dump(
            document, Dumper=yaml.SafeDumper, **OPTIONS
        )


@pytest.mark.parametrize("indent", [0, 41])
def test_text_past_the_width_is_folded_where_pyyaml_folds_it(indent: int) -> None:
    words = " ".join(f"w{n}" for n in range(12_000))
    quoted = "'" + words
    escaped = "\t" + words
    for value in (words, quoted, escaped, words + "\n" + words):
        document: dict[str, Any] = {"k": value, "l": [value]}
        for _ in range(indent):
            document = {"n": document}
        written = yaml_writer.Writer().write([document], explicit_start=True)
        assert written == pyyaml_all([document])
        assert "\n" in written.split("k:", 1)[1].split("\nl:", 1)[0] or value is escaped


def test_kubernetes_objects_are_written_by_the_writer() -> None:
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "labels": {"a": "b", "app.kubernetes.io/name": "m"}},
        "data": {"script": "#!/bin/sh\n\techo 'hi'\n", "n": 3, "f": 1.5, "t": True, "z": None},
        "status": {"conditions": [{"status": "True", "type": "Ready", "message": "a: b"}]},
        "spec": {"empty": {}, "none": [], "nested": [[], [{}], ["x", 1e17, -0.0]]},
    }
    written = yaml_writer.Writer().write([manifest], explicit_start=True)
    assert written == pyyaml_all([manifest])


@pytest.mark.parametrize(
    "document",
    [
        {"": 1},
        {"k" * 123: 1},
        {"a\nb": 1},
        {1: "int key"},
        {1: "keys that do not sort", "b": 2},
        {"t": ("a", "tuple")},
        {"shared": [{}], "again": {}},
    ],
)
def test_what_the_writer_leaves_to_pyyaml_is_written_by_pyyaml(document: dict[Any, Any]) -> None:
    if "shared" in document:
        document["again"] = document["shared"][0]
    with pytest.raises((yaml_writer.UnsupportedError, TypeError)):
        yaml_writer.Writer().write([document], explicit_start=True)
    try:
        expected = pyyaml_all([document])
    except yaml.YAMLError as error:
        with pytest.raises(type(error)):
            yamlio.dump_all([document])
    else:
        assert yamlio.dump_all([document]) == expected


def test_a_dict_or_list_met_twice_is_an_alias_as_pyyaml_writes_it() -> None:
    shared = {"b": [1, 2.5, None, True], "a": "x"}
    listed = ["p", "q"]
    documents: list[dict[str, Any]] = [
        {"one": shared, "two": shared, "l1": listed, "l2": listed, "e": {}, "f": []},
        {"again": shared, "float": 1e17},
    ]
    written = yamlio.dump_all(documents)
    assert "&id001" in written
    assert written == pyyaml_all(documents)
    # Met again in another document it is written again, as PyYAML does.
    assert yamlio.dump_all([{"a": shared}, {"b": shared}]) == pyyaml_all(
        [{"a": shared}, {"b": shared}]
    )
