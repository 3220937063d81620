"""The human summary: composites, what is not true, status tables, workloads, warnings."""

from __future__ import annotations

from typing import Any

from modelplane_cli.render import RenderResult
from modelplane_cli.render.pipeline import Event
from modelplane_cli.render.reconcile import Report
from modelplane_cli.render.summary import summarize, table
from modelplane_cli.render.world import ObjectKey

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "metadata": {"name": "kimi", "namespace": "ml", "uid": "u-md"},
    "status": {
        "conditions": [
            {
                "type": "ReplicasScheduled",
                "status": "False",
                "reason": "InsufficientCapacity",
                "message": "1 of 2 replicas placed",
            },
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
            {"type": "Ready", "status": "False", "reason": "Creating"},
        ],
        "placements": [
            {"replica": "kimi-a1", "cluster": "east", "pools": {"workers": "h100"}},
            {
                "replica": "kimi-b2",
                "cluster": "west",
                "pools": {"decode": "h200", "prefill": "h100"},
            },
        ],
        "matchTrace": [
            {
                "cluster": "north",
                "reason": "NoMatchingPool",
                "message": "no pool matches role prefill",
            },
            {
                "cluster": "north",
                "pool": "l4",
                "role": "prefill",
                "reason": "TooFewDevices",
                "message": "request 'gpu' (count 8): gpu has only 1 per node",
            },
        ],
    },
}
REPLICA: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelReplica",
    "metadata": {"name": "kimi-a1", "namespace": "ml", "uid": "u-r"},
    "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]},
}


def _object(name: str, manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "ownerReferences": [
                {
                    "apiVersion": "modelplane.ai/v1alpha1",
                    "kind": "ModelReplica",
                    "name": "kimi-a1",
                    "uid": "u-r",
                    "controller": True,
                }
            ],
        },
        "spec": {"providerConfigRef": {"name": "east"}, "forProvider": {"manifest": manifest}},
    }


LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 3}},
}
CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"}
KSERVE = {
    "apiVersion": "serving.kserve.io/v1alpha2",
    "kind": "LLMInferenceService",
    "spec": {
        "replicas": 2,
        "parallelism": {"tensor": 8, "pipeline": 2},
        "worker": {},
        "prefill": {"replicas": 3, "parallelism": {"tensor": 8}},
    },
}
WARNING: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Event",
    "type": "Warning",
    "reason": "InsufficientCapacity",
    "message": 'Pipeline step "schedule": replica 2 does not fit',
    "involvedObject": {"kind": "ModelDeployment", "name": "kimi", "namespace": "ml"},
}


KIMI = ObjectKey("modelplane.ai/v1alpha1", "ModelDeployment", "ml", "kimi")
# What the last round's reconcile of kimi raised: the Warning above, still standing.
LAST_ROUND = Report(KIMI, [Event("Warning", WARNING["reason"], WARNING["message"])])


def render_summary(
    events: list[dict[str, Any]] | None = None, reports: list[Report] | None = None
) -> str:
    result = RenderResult(
        objects=[DEPLOYMENT, REPLICA, _object("a", LWS), _object("b", CLAIM), _object("c", KSERVE)],
        events=[WARNING, {**WARNING, "type": "Normal", "message": "fine"}]
        if events is None
        else events,
        reports=[LAST_ROUND] if reports is None else reports,
        converged=True,
        rounds=3,
    )
    return summarize(result, ["ModelDeployment", "ModelReplica"])


def test_summary_sections() -> None:
    text = render_summary()

    assert text.startswith(
        "Rendered 5 objects in 3 rounds (converged; under a second on a control plane with "
        "default intervals, under a second with watches on).\n\nCOMPOSITES\n"
    )
    assert (
        "ModelDeployment  ml         kimi     False  True    "
        "ReplicasScheduled=False (InsufficientCapacity)"
    ) in text
    assert "ModelReplica     ml         kimi-a1  True   -" in text
    assert (
        "ModelDeployment ml/kimi  ReplicasScheduled  InsufficientCapacity  1 of 2 replicas placed"
        in text
    )


def test_status_records_become_tables_whatever_their_shape() -> None:
    text = render_summary()

    assert "PLACEMENTS  ModelDeployment ml/kimi\nREPLICA  CLUSTER  POOLS\n" in text
    assert "kimi-b2  west     decode=h200, prefill=h100" in text
    # Reason before message: the short word lines up, the long text ends the row.
    assert (
        "MATCH TRACE  ModelDeployment ml/kimi\n"
        "CLUSTER  POOL  ROLE     REASON          MESSAGE\n"
        "north    -     -        NoMatchingPool  no pool matches role prefill\n"
        "north    l4    prefill  TooFewDevices   request 'gpu' (count 8): gpu has only 1 per node\n"
    ) in text


def test_workloads_count_objects_by_wrapped_kind_and_pods() -> None:
    text = render_summary()

    assert "WORKLOADS\nCOMPOSITE                PROVIDERCONFIG  OBJECTS" in text
    # 2 groups of 3 (LeaderWorkerSet) + 2 replicas over 2 nodes + 3 prefill pods (KServe).
    assert (
        "ModelReplica ml/kimi-a1  east            "
        "LLMInferenceService=1, LeaderWorkerSet=1, ResourceClaimTemplate=1  13" in text
    )


def test_only_warning_events_are_listed() -> None:
    text = render_summary()

    assert (
        'ModelDeployment ml/kimi  InsufficientCapacity  Pipeline step "schedule": replica 2' in text
    )
    assert "fine" not in text


def test_warnings_only_earlier_rounds_raised_are_counted_not_listed() -> None:
    """An event is kept from every round; one the last round no longer raised (a
    later round resolved it) would contradict the final state beside it (rev-ml F4)."""
    earlier = {**WARNING, "reason": "TLSPolicyPending", "message": "gets no traffic"}
    other = {**WARNING, "message": "replica 3 does not fit"}

    text = render_summary(events=[WARNING, earlier, other])

    assert text.endswith(
        "WARNINGS\n"
        "COMPOSITE                REASON                MESSAGE\n"
        'ModelDeployment ml/kimi  InsufficientCapacity  Pipeline step "schedule": replica 2 '
        "does not fit\n"
        "(2 earlier warnings, no longer raised in the last round: -o yaml lists every Event)\n"
    )


def test_with_no_warning_left_in_the_last_round_the_table_says_so() -> None:
    text = render_summary(events=[WARNING], reports=[Report(KIMI)])

    assert text.endswith(
        "WARNINGS\nNone in the last round.\n"
        "(1 earlier warning, no longer raised in the last round: -o yaml lists every Event)\n"
    )
    assert "replica 2" not in text


def test_no_warning_at_all_prints_no_warnings_section() -> None:
    assert "WARNINGS" not in render_summary(events=[], reports=[])


def test_table_pads_all_but_the_last_column() -> None:
    assert table(["A", "LONGER"], [["xyz", "1"], ["x", "multi\nline"]]) == (
        "A    LONGER\nxyz  1\nx    multi line"
    )


SERVICE: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelService",
    "metadata": {"name": "chat", "namespace": "ml", "uid": "u-s"},
    "spec": {"gatewayRef": {"name": "fleet"}},
    "status": {
        "address": "http://chat.models.example.com",
        "endpoints": [
            {
                "deployment": "kimi",
                "replica": "kimi-a1",
                "cluster": "east",
                "url": "http://e/a1",
                "weight": 6667,
            },
            {"external": True, "url": "https://api.example.com/v1", "weight": 3333},
        ],
        "conditions": [{"type": "Routed", "status": "True", "reason": "RouteAccepted"}],
    },
}


def test_each_service_shows_its_address_and_its_backends_shares() -> None:
    result = RenderResult(objects=[SERVICE], events=[], reports=[], converged=True, rounds=1)
    text = summarize(result, ["ModelService"])
    assert (
        "SERVICES\n"
        "SERVICE  GATEWAY  ADDRESS                         ROUTED\n"
        "ml/chat  fleet    http://chat.models.example.com  True (RouteAccepted)\n"
    ) in text
    assert (
        "BACKENDS  ModelService ml/chat\n"
        "DEPLOYMENT  REPLICA  CLUSTER  SHARE   URL\n"
        "kimi        kimi-a1  east     66.67%  http://e/a1\n"
        "external    -        -        33.33%  https://api.example.com/v1\n"
    ) in text
    assert "SERVICES" not in render_summary()
