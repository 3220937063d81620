"""The read-back models the generator writes for the workload kinds (schemas/read_back.py
`WORKLOADS`) type every field as the kind's upstream CRD does, and name the fields the
kinds decide on."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.core.kinds import WORKLOAD_KINDS
from modelplane_cli.schema.upstream import reference_crd_directory

ROOT = Path(__file__).resolve().parents[2]
CRDS = reference_crd_directory()
# The kinds with a CRD (a Deployment is built in: its fields are apps/v1's).
CRD_FILES = {
    "LeaderWorkerSet": "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    "LLMInferenceService": "serving.kserve.io_llminferenceservices.yaml",
}


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("read_back", ROOT / "schemas" / "read_back.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("read_back", module)
    spec.loader.exec_module(module)
    return module


WORKLOADS: dict[str, Any] = _generator().WORKLOADS

try:  # libyaml's loader: the KServe CRD is megabytes that PyYAML's Python parser takes seconds over
    from yaml import CSafeLoader as _Loader  # pyright: ignore[reportAttributeAccessIssue]
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _Loader


def _version(crd: dict[str, Any], api_version: str) -> dict[str, Any]:
    name = api_version.rsplit("/", 1)[1]
    return next(v for v in crd["spec"]["versions"] if v["name"] == name)


@pytest.mark.needs_crds
@pytest.mark.parametrize("kind", sorted(CRD_FILES))
def test_every_field_is_typed_as_its_crd_types_it(kind: str) -> None:
    assert CRDS is not None
    schema = WORKLOADS[kind]["properties"]
    crd = yaml.load((CRDS / CRD_FILES[kind]).read_text(), Loader=_Loader)
    upstream = _version(crd, schema["apiVersion"]["const"])["schema"]["openAPIV3Schema"]
    for part in ("spec", "status"):
        fields = upstream["properties"][part]["properties"]
        for name, field in schema[part]["properties"].items():
            assert name in fields, f"{kind} {part}.{name} is not in its CRD"
            assert field["type"] == fields[name]["type"], f"{kind} {part}.{name}"


@pytest.mark.parametrize("kind", [k for k in WORKLOAD_KINDS if k.model is not None], ids=repr)
def test_a_kind_decides_on_fields_its_model_has(kind: Any) -> None:
    assert kind.model is not None
    status = kind.model.model_fields["status"].annotation
    fields = next(a for a in status.__args__ if a is not type(None)).model_fields
    assert set(kind.complete_when) <= set(fields)
    assert "conditions" in fields


def test_every_kind_that_counts_replicas_reads_through_a_model() -> None:
    assert [k for k in WORKLOAD_KINDS if k.complete_when and k.model is None] == []
    assert {k.kind for k in WORKLOAD_KINDS if k.model is not None} == set(WORKLOADS)
