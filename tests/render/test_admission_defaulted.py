"""A write stored whatever the verdict is defaulted without being validated
(`Admission.defaulted`), and stores what `admit(...)[0]` stores."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.render import Apis, SchemaAdmission, default_apis_dir, read_documents, render
from modelplane_cli.render.admission import NoAdmission

from .test_examples import EXAMPLES, _ready_to_run  # pyright: ignore[reportPrivateUsage]

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
    files = Apis.load(default_apis_dir()).definition_files
    admission = SchemaAdmission.from_files(files)
    checker = SchemaAdmission.from_files(files)
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
                assert admission.defaulted(obj) == checker.admit(obj)[0], obj
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
