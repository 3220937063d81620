"""Serving only once the cluster runs what the replica composes now, and the revision
that verdict is for.

Crossplane writes an Object's new manifest at once; provider-kubernetes applies it
later, and its first read-back is the API server's answer to the apply, which still
carries the status the workload's controller wrote for the previous generation.
Each case is a whole response: the serving response, with what the case changes.
"""

import copy
from collections.abc import Callable
from typing import Any

import pytest
from compose_model_replica.fn import FunctionRunner

from modelplane_dev.testing import as_dict, request, run

from .builders import REPLICA, cluster, replica

CLUSTERS = {"inferencecluster": [cluster()]}
WORKLOAD = "workload-workers"
DIGEST = "modelplane.ai/spec-digest"

ReadBack = Callable[[dict[str, Any]], dict[str, Any]]


def at_revision(revision: str, image: str) -> dict[str, Any]:
    """The replica as its deployment writes it at `revision`, running `image`."""
    out = replica()
    out["metadata"]["annotations"] = {"modelplane.ai/revision": revision}
    template = copy.deepcopy(out["spec"]["workers"]["template"])
    template["spec"]["containers"][0]["image"] = image
    out["spec"]["workers"]["template"] = template
    return out


OLD = at_revision("rev-1", "vllm:v1")
NEW = at_revision("rev-2", "vllm:v2")


def workload_manifest(composite: dict[str, Any]) -> dict[str, Any]:
    response = as_dict(run(FunctionRunner(), request(composite, required=CLUSTERS)))
    return response["desired"]["resources"][WORKLOAD]["resource"]["spec"]["forProvider"]["manifest"]


def serving_status(manifest: dict[str, Any], generation: int | None) -> dict[str, Any]:
    """A Deployment as its controller reports it once every pod of `manifest` is up,
    at `generation` (None: an object read back with no generation)."""
    read = copy.deepcopy(manifest)
    status: dict[str, Any] = {
        "availableReplicas": 1,
        "updatedReplicas": 1,
        "conditions": [{"type": "Available", "status": "True"}],
    }
    if generation is not None:
        read["metadata"]["generation"] = generation
        status["observedGeneration"] = generation
    read["status"] = status
    return read


def observed(read_back: ReadBack) -> dict[str, Any]:
    """Every Object NEW composes, as Crossplane wrote it, Ready and Synced; each reads
    back `read_back` of its manifest (the workload) or its manifest (anything else)."""
    response = as_dict(run(FunctionRunner(), request(NEW, required=CLUSTERS)))
    out: dict[str, Any] = {}
    for key, value in response["desired"]["resources"].items():
        obj = value["resource"]
        manifest = obj["spec"]["forProvider"]["manifest"]
        out[key] = {
            **obj,
            "status": {
                "conditions": [
                    {"type": "Ready", "status": "True"},
                    {"type": "Synced", "status": "True"},
                ],
                "atProvider": {"manifest": read_back(manifest) if key == WORKLOAD else manifest},
            },
        }
    return out


def applied(manifest: dict[str, Any]) -> dict[str, Any]:
    return serving_status(manifest, generation=3)


def stale(_: dict[str, Any]) -> dict[str, Any]:
    # The Object carries NEW's manifest; the cluster still runs OLD's, serving.
    return serving_status(workload_manifest(OLD), generation=2)


def unobserved(manifest: dict[str, Any]) -> dict[str, Any]:
    # Applied (the answer to the apply): generation 3, status still generation 2's.
    read = serving_status(manifest, generation=3)
    read["status"]["observedGeneration"] = 2
    return read


def before_digests(manifest: dict[str, Any]) -> dict[str, Any]:
    # Applied before workloads carried a digest or a generation: judged on its status.
    read = serving_status(manifest, generation=None)
    del read["metadata"]["annotations"][DIGEST]
    return read


def serving_false(message: str) -> dict[str, Any]:
    return {
        "type": "Serving",
        "status": "STATUS_CONDITION_FALSE",
        "reason": "WorkloadNotAvailable",
        "message": message,
        "target": "TARGET_COMPOSITE",
    }


def want(serving: dict[str, Any] | None = None, available: bool = True) -> dict[str, Any]:
    """The response to NEW when its workload serves, with `serving` for Serving and
    the workload's `available` in the status."""
    out = as_dict(
        run(FunctionRunner(), request(NEW, observed=observed(applied), required=CLUSTERS))
    )
    if serving is not None:
        out["conditions"] = [c for c in out["conditions"] if c["type"] != "Serving"] + [serving]
        # A revision is published only beside a True verdict.
        out["desired"]["composite"]["resource"]["status"]["servingRevision"] = ""
    out["desired"]["composite"]["resource"]["status"]["workloads"][0]["available"] = available
    return out


def test_the_serving_response() -> None:
    """What every case is compared with: applied and observed, the replica serves, and
    says which revision that verdict is for."""
    got = want()
    serving = {c["type"]: c for c in got["conditions"]}["Serving"]
    assert serving["status"] == "STATUS_CONDITION_TRUE"
    assert got["desired"]["composite"]["resource"]["status"]["servingRevision"] == "rev-2"
    manifest = got["desired"]["resources"][WORKLOAD]["resource"]["spec"]["forProvider"]["manifest"]
    assert (
        manifest["metadata"]["annotations"][DIGEST]
        != workload_manifest(OLD)["metadata"]["annotations"][DIGEST]
    )


CASES = [
    pytest.param(applied, None, True, id="applied and observed"),
    pytest.param(
        stale,
        lambda old, new: serving_false(
            f"{WORKLOAD}: the change is not applied to the cluster yet (its read-back "
            f"carries {DIGEST} {old}, not {new})"
        ),
        True,
        id="stale read-back",
    ),
    pytest.param(
        unobserved,
        lambda old, new: serving_false(
            f"Deployment {REPLICA}-workers is Available for an older spec: its controller "
            "has not observed generation 3 yet "
            "(its status is for generation 2)"
        ),
        False,
        id="generation not observed",
    ),
    pytest.param(before_digests, None, True, id="read back before digests"),
]


@pytest.mark.parametrize(("read_back", "serving", "available"), CASES)
def test_serving_follows_what_the_cluster_runs(
    read_back: ReadBack,
    serving: Callable[[str, str], dict[str, Any]] | None,
    available: bool,
) -> None:
    old = workload_manifest(OLD)["metadata"]["annotations"][DIGEST]
    new = workload_manifest(NEW)["metadata"]["annotations"][DIGEST]
    got = as_dict(
        run(FunctionRunner(), request(NEW, observed=observed(read_back), required=CLUSTERS))
    )
    assert got == want(serving(old, new) if serving is not None else None, available)


def test_an_object_written_before_digests_is_applied() -> None:
    """After an upgrade every stored Object holds its manifest as composed before
    workloads carried a digest: the same manifest without the annotation is not a
    change, so the replica keeps serving (else every replica of the fleet would read
    not serving on its first reconcile and lose its endpoint at once)."""
    stored = observed(before_digests)
    manifest = stored[WORKLOAD]["spec"]["forProvider"]["manifest"]
    del manifest["metadata"]["annotations"][DIGEST]
    if not manifest["metadata"]["annotations"]:
        del manifest["metadata"]["annotations"]
    got = as_dict(run(FunctionRunner(), request(NEW, observed=stored, required=CLUSTERS)))
    assert got == want()
