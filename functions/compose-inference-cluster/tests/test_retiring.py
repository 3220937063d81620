"""Releases no longer planned leave only after every Usage naming them is gone.

Each case is one reconcile: what exists (observed), what the plan desires, and
which of the rest the reconcile keeps.
"""

from typing import Any

import pytest
from compose_inference_cluster.releases import (
    RELEASE_PREFIX,
    REPLICA_USAGE_PREFIX,
    USAGE_PREFIX,
)
from compose_inference_cluster.retiring import retire
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.structs import to_struct

Obj = dict[str, Any]
SYSTEM = "modelplane-system"


def release(name: str) -> Obj:
    return {
        "apiVersion": "helm.m.crossplane.io/v1beta1",
        "kind": "Release",
        "metadata": {"name": f"east-{name}", "namespace": SYSTEM},
        "spec": {"forProvider": {"chart": {"name": name}}},
    }


def usage(of: str, by_kind: str, by: str, namespace: str = SYSTEM) -> Obj:
    return {
        "apiVersion": "protection.crossplane.io/v1beta1",
        "kind": "Usage",
        "metadata": {"name": f"{of}-{by}", "namespace": namespace},
        "spec": {
            "of": {
                "apiVersion": "helm.m.crossplane.io/v1beta1",
                "kind": "Release",
                "resourceRef": {"name": f"east-{of}", "namespace": SYSTEM},
            },
            "by": {"kind": by_kind, "resourceRef": {"name": by}},
        },
    }


# kai-scheduler was planned and protected; the plan now holds volcano only.
KAI = {f"{RELEASE_PREFIX}kai": release("kai")}
REPLICA_USAGE = {
    f"{REPLICA_USAGE_PREFIX}kai-team-a-chat-0": usage("kai", "ModelReplica", "chat-0", "team-a")
}
# kai-operator is installed after kai: an ordering Usage keeps kai while it exists.
ORDER = {
    f"{RELEASE_PREFIX}kai-operator": release("kai-operator"),
    f"{USAGE_PREFIX}kai-by-kai-operator": usage("kai", "Release", "east-kai-operator"),
}
PLACED = {("team-a", "chat-0")}


@pytest.mark.parametrize(
    ("observed", "placed", "unreadable", "kept", "retiring"),
    [
        pytest.param(
            {**KAI, **REPLICA_USAGE},
            PLACED,
            False,
            {"release-kai", "usage-replica-kai-team-a-chat-0"},
            ["east-kai"],
            id="a replica that used it still runs: the Release and its Usage stay",
        ),
        pytest.param(
            {**KAI, **REPLICA_USAGE},
            set[tuple[str, str]](),
            False,
            {"release-kai"},
            ["east-kai"],
            id="the replica is gone: its Usage leaves, the Release stays this reconcile",
        ),
        pytest.param(
            {**KAI, **REPLICA_USAGE},
            set[tuple[str, str]](),
            True,
            {"release-kai", "usage-replica-kai-team-a-chat-0"},
            ["east-kai"],
            id="replicas that cannot be read keep every replica Usage",
        ),
        pytest.param(
            KAI,
            set[tuple[str, str]](),
            False,
            set[str](),
            [],
            id="no Usage names it any more: the Release leaves",
        ),
        pytest.param(
            ORDER | KAI,
            set[tuple[str, str]](),
            False,
            {"release-kai", "usage-kai-by-kai-operator"},
            ["east-kai"],
            id="its dependent still exists: the ordering Usage stays, the dependent leaves",
        ),
        pytest.param(
            {**KAI, f"{USAGE_PREFIX}kai-by-kai-operator": ORDER["usage-kai-by-kai-operator"]},
            set[tuple[str, str]](),
            False,
            {"release-kai"},
            ["east-kai"],
            id="the dependent is gone: the ordering Usage leaves, the Release a reconcile later",
        ),
    ],
)
def test_retire(
    observed: dict[str, Obj],
    placed: set[tuple[str, str]],
    unreadable: bool,
    kept: set[str],
    retiring: list[str],
) -> None:
    req = fnv1.RunFunctionRequest()
    for key, body in observed.items():
        req.observed.resources[key].resource.CopyFrom(to_struct(body))
    rsp = fnv1.RunFunctionResponse()
    got = retire(
        req,
        rsp,
        observed,
        release_keys={},
        usage_prefix=USAGE_PREFIX,
        replica_usage_prefix=REPLICA_USAGE_PREFIX,
        release_prefix=RELEASE_PREFIX,
        placed=placed,
        keep_replica_usages=unreadable,
    )
    assert got == retiring
    assert set(rsp.desired.resources) == kept
    for key in kept:
        # Kept as it exists: nothing of it changes while it retires.
        assert rsp.desired.resources[key].resource == req.observed.resources[key].resource
    for key in kept & set(ORDER) | kept & set(REPLICA_USAGE):
        assert rsp.desired.resources[key].ready == fnv1.READY_TRUE


def test_a_planned_release_is_never_retired() -> None:
    req = fnv1.RunFunctionRequest()
    observed = {**KAI, **REPLICA_USAGE}
    for key, body in observed.items():
        req.observed.resources[key].resource.CopyFrom(to_struct(body))
    rsp = fnv1.RunFunctionResponse()
    rsp.desired.resources["release-kai"].resource.CopyFrom(to_struct(release("kai")))
    got = retire(
        req,
        rsp,
        observed,
        release_keys={"east-kai": "release-kai"},
        usage_prefix=USAGE_PREFIX,
        replica_usage_prefix=REPLICA_USAGE_PREFIX,
        release_prefix=RELEASE_PREFIX,
        placed=PLACED,
        keep_replica_usages=False,
    )
    assert got == []
    assert set(rsp.desired.resources) == {"release-kai", "usage-replica-kai-team-a-chat-0"}
