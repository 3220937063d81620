"""Which provider-kubernetes Objects are watched (`spec.watch: true`).

provider-kubernetes re-reads an up-to-date Object only every `--poll` (10 minutes)
unless the Object is watched; an Object whose remote status a decision waits on
(a workload, a Gateway, an HTTPRoute, a prerequisite observer) is watched, and
one that is ready once created is not.
"""

from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.xfn import objects

PC = {"kind": "ClusterProviderConfig", "name": "east"}
DERIVED = {"policy": "DeriveFromCelQuery", "celQuery": "true"}
SHARED = ("Observe", "Create", "Update", "LateInitialize")


@pytest.mark.parametrize(
    ("readiness", "policies", "watched"),
    [
        (None, ("*",), False),
        ({"policy": "SuccessfulCreate"}, ("*",), False),
        ({"policy": "SuccessfulCreate"}, SHARED, False),
        (DERIVED, ("*",), True),
        ({"policy": "DeriveFromObject"}, ("*",), True),
        ({"policy": "AllTrue"}, ("*",), True),
        (None, objects.OBSERVE_ONLY, True),
        (DERIVED, SHARED, True),
    ],
)
def test_an_object_is_watched_when_its_remote_status_is_waited_on(
    readiness: dict[str, Any] | None, policies: tuple[str, ...], watched: bool
) -> None:
    obj = objects.wrap("o", {"kind": "ConfigMap"}, PC, readiness, management_policies=policies)
    assert objects.watched(readiness, policies) is watched
    assert obj["spec"].get("watch", False) is watched
    # Never written as false: the CRD's default, and absent keeps the manifest short.
    assert obj["spec"].get("watch") in (None, True)


def test_an_object_whose_status_a_decision_reads_is_watched() -> None:
    obj = objects.wrap("o", {"kind": "Job"}, PC, status_read=True)
    assert obj["spec"]["watch"] is True
    assert objects.watched(None, ("*",), status_read=True)


def test_the_object_crd_has_spec_watch(reference_crds: Path) -> None:
    """provider-kubernetes' namespaced Object CRD, the one Modelplane composes, has the
    boolean `spec.watch` (v1.2.1 and later), so the field is not pruned."""
    crd = yaml.safe_load((reference_crds / "kubernetes.m.crossplane.io_objects.yaml").read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert spec["watch"]["type"] == "boolean"
    assert f"{crd['spec']['group']}/v1alpha1" == objects.OBJECT_API_VERSION
