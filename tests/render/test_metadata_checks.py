"""A composed resource's metadata check, kept by the fields it reads, answers what
checking afresh answers (`SchemaAdmission.metadata_errors` against `metadata_errors`)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli.render import SchemaAdmission
from modelplane_cli.render.admission import NoAdmission, metadata_errors

# Valid and invalid names, label keys and values (a prefix, an uppercase letter, a
# trailing dash, too long), and values that are not strings.
_names = st.sampled_from(
    ["web", "web-1", "Web", "web-", "a" * 64, "a" * 254, "", "x.y", "1", "ns/web"]
)
_any = st.one_of(_names, st.none(), st.integers(-2, 2), st.booleans(), st.just(1.0))
_keys = st.sampled_from(
    ["app", "example.org/app", "Example.org/app", "-app", "a/b/c", "crossplane.io/composite"]
)
_maps = st.one_of(st.none(), st.dictionaries(_keys, _any, max_size=3), _names)
_metadata = st.fixed_dictionaries(
    {},
    optional={
        "name": _any,
        "generateName": _any,
        "namespace": _any,
        "labels": _maps,
        "annotations": _maps,
        "finalizers": st.one_of(st.none(), st.lists(st.one_of(_keys, _any), max_size=2)),
        "uid": _names,
        "ownerReferences": st.lists(st.fixed_dictionaries({"name": _names}), max_size=1),
    },
)


def _admission() -> SchemaAdmission:
    # The metadata check is every kind's, whatever the XRDs say.
    return SchemaAdmission.from_files([])


@settings(max_examples=300, deadline=None)
@given(st.lists(_metadata, min_size=1, max_size=8))
def test_kept_metadata_checks_are_the_fresh_ones(metas: list[dict[str, Any]]) -> None:
    admission = _admission()
    for meta in [*metas, *reversed(metas)]:  # every check again, from the memo
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
        assert admission.metadata_errors(obj) == metadata_errors(obj)
        assert NoAdmission().metadata_errors(obj) == metadata_errors(obj)


def test_a_kept_check_is_the_callers_to_change() -> None:
    admission = _admission()
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad"}}
    first = admission.metadata_errors(obj)
    assert first
    first.clear()
    assert admission.metadata_errors(obj) == metadata_errors(obj)


def test_fields_the_check_does_not_read_share_one_answer() -> None:
    admission = _admission()
    meta = {"name": "web", "namespace": "team", "labels": {"-bad": "x"}}
    one = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    other = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {**meta, "uid": "u", "ownerReferences": [{"name": "x"}]},
        "spec": {"replicas": 2},
    }
    assert admission.metadata_errors(one) == admission.metadata_errors(other) != []
