"""Admission's shortcuts answer what the full path answers: a composed resource's
metadata check kept by the fields it reads (`SchemaAdmission.metadata_errors`
against `metadata_errors`), and a write stored whatever the verdict defaulted
without being validated (`defaulted` against `admit(...)[0]`)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli.render import Apis, SchemaAdmission, default_apis_dir, read_documents, render
from modelplane_cli.render.admission import NoAdmission, metadata_errors

from .test_examples import EXAMPLES, _ready_to_run  # pyright: ignore[reportPrivateUsage]

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


_SPECS: list[Any] = [
    None,
    {},
    {"bogus": 1},
    {"replicas": "many"},
    {"crossplane": {"resourceRefs": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a"}]}},
    {"crossplane": {"resourceRefs": [{"kind": 3}]}},
]
_STATUSES: list[Any] = ["absent", None, {}, {"bogus": True}, {"conditions": "none"}]


@pytest.mark.parametrize("warm", [False, True])
def test_defaulted_is_what_admit_stores_for_every_kind(warm: bool) -> None:
    """Valid and invalid specs and statuses (present, null, absent) of every XRD's
    kind, and a kind no XRD defines; `warm` admits each body first (a memo hit)."""
    admission = SchemaAdmission.from_files(Apis.load(default_apis_dir()).definition_files)
    kinds = [*admission._registry.kinds(), ("v1", "ConfigMap")]  # pyright: ignore[reportPrivateUsage]
    for api_version, kind in kinds:
        for spec in _SPECS:
            for status in _STATUSES:
                obj: dict[str, Any] = {
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {"name": "a", "namespace": "ns", "uid": "u"},
                    "spec": spec,
                }
                if status != "absent":
                    obj["status"] = status
                if warm:
                    admission.admit(obj)
                fresh = SchemaAdmission.from_files(
                    Apis.load(default_apis_dir()).definition_files
                ).admit(obj)[0]
                assert admission.defaulted(obj) == fresh, obj
                assert NoAdmission().defaulted(obj) == NoAdmission().admit(obj)[0]


def test_every_references_write_of_the_examples_stores_what_admit_stores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    apis, registry = _ready_to_run()
    admission = SchemaAdmission.from_files(apis.definition_files)
    checker = SchemaAdmission.from_files(apis.definition_files)
    seen: list[str] = []
    shortcut = admission.defaulted

    def checked(obj: Any) -> Any:
        answer = shortcut(obj)
        assert answer == checker.admit(obj)[0]
        seen.append(str(obj["kind"]))
        return answer

    monkeypatch.setattr(admission, "defaulted", checked)
    render(read_documents([str(EXAMPLES)]), apis, registry, admission, in_process=True)
    assert len(set(seen)) > 1  # writes of several kinds were checked
