"""Failover of a deployment whose every replica runs on the cluster that becomes
unreachable, rendered round by round (review rev-gke-drain #2).

`llama` runs 4 one-L4 replicas on site-a (site-b is cordoned when it is placed).
Then site-b is uncordoned and site-a's own Objects stop syncing from 10:00; the
render's clock stands at 10:10. The replicas on site-a are no longer counted as
serving (Serving Unknown, ClusterUnreachable), all four replacements are placed on
site-b in one round (a shortfall, not a surge paced by maxSurge), and no replica on
site-a goes before a replacement serves: at every round, the replicas left on site-a
and those serving on site-b make four, and in the end all four serve on site-b.
"""

from collections import Counter
from typing import Any

import pytest

from modelplane_cli.render import Document, read_documents
from modelplane_cli.schema import ManifestValidator

from .fleets import EXAMPLES, Fleet, Renderer, find
from .test_drain_failover import _probes, _set_synced
from .test_examples import assert_valid

Obj = dict[str, Any]
CORDON = {"key": "example.com/cordon", "effect": "NoSchedule"}


def site(name: str, taints: list[Obj]) -> list[Obj]:
    return [
        {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceCluster",
            "metadata": {"name": name, "labels": {"tier": "production"}},
            "spec": {
                "cluster": {
                    "source": "Existing",
                    "existing": {
                        "secretRef": {
                            "name": f"{name}-kubeconfig",
                            "namespace": "modelplane-system",
                        }
                    },
                },
                "kubernetesVersion": "1.34",
                "backend": {"type": "Native"},
                "nodePools": [{"name": "l4", "className": "l4-1x", "nodeCount": 8}],
                "scheduling": {"provider": "Default"},
                "taints": taints,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{name}-kubeconfig", "namespace": "modelplane-system"},
            "type": "Opaque",
            "stringData": {"kubeconfig": "x"},
        },
    ]


def llama(strategy: Obj | None) -> list[Obj]:
    spec: Obj = {
        "replicas": 4,
        "nodeSelector": {
            "devices": [
                {
                    "name": "gpu",
                    "count": 1,
                    "selectors": [
                        {
                            "cel": 'device.attributes["gpu.nvidia.com"].architecture == "Ada Lovelace"'
                        }
                    ],
                }
            ]
        },
        "workers": {
            "template": {
                "metadata": {"labels": {"app": "llama"}},
                "spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.7.3"}]},
            }
        },
    }
    if strategy is not None:
        spec["strategy"] = {"rollingUpdate": strategy}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "ModelDeployment",
            "metadata": {"name": "llama", "namespace": "team"},
            "spec": spec,
        },
    ]


def site_a_down(objects: list[Obj]) -> None:
    find(objects, "InferenceCluster", "site-b")["spec"]["taints"] = []
    for probe in _probes(objects, "site-a"):
        _set_synced(
            probe,
            {
                "type": "Synced",
                "status": "False",
                "reason": "ReconcileError",
                "message": "connect failed: dial tcp 10.0.0.1:443: i/o timeout",
                "lastTransitionTime": "2026-12-01T10:00:00Z",
            },
        )


def replicas(fleet: Fleet) -> Counter[tuple[str, str]]:
    """ModelReplicas by (cluster, Serving status)."""
    found: Counter[tuple[str, str]] = Counter()
    for obj in fleet.all("ModelReplica"):
        conditions = obj.get("status", {}).get("conditions", [])
        serving = next((c["status"] for c in conditions if c["type"] == "Serving"), "-")
        found[(obj["spec"]["clusterName"], serving)] += 1
    return found


@pytest.mark.parametrize(
    "strategy",
    [None, {"maxSurge": 0, "maxUnavailable": 1}],
    ids=["25%/25%", "surge-0"],
)
def test_every_replica_is_replaced_at_once_and_none_is_lost(
    renderer: Renderer, strategy: Obj | None, manifest_validator: ManifestValidator
) -> None:
    catalog = read_documents([str(EXAMPLES / "catalog")])
    objects = [*site("site-a", []), *site("site-b", [CORDON]), *llama(strategy)]
    placed = renderer.documents([*catalog, *(Document("scenario", o) for o in objects)])
    assert placed.result.converged, placed.result.errors
    assert replicas(placed) == {("site-a", "True"): 4}

    rounds = placed.edit_rounds(site_a_down, 12, now="2026-12-01T10:10:00Z")

    seen = [replicas(world) for world in rounds]
    first = next(i for i, r in enumerate(seen) if any(c == "site-b" for c, _ in r))
    assert sum(n for (c, _), n in seen[first].items() if c == "site-b") == 4, seen[first]
    for count in seen:
        on_a = sum(n for (c, _), n in count.items() if c == "site-a")
        assert on_a + count[("site-b", "True")] >= 4, seen
    done = rounds[-1]
    assert done.result.converged, done.result.errors
    assert replicas(done) == {("site-b", "True"): 4}
    ready = done.condition("ModelDeployment", "llama", "ReplicasReady")
    assert (ready["status"], ready["message"]) == ("True", "4 of 4 replicas serving")
    assert_valid(done, manifest_validator)


def test_with_nowhere_to_go_the_replicas_stay_unknown_and_not_ready(renderer: Renderer) -> None:
    catalog = read_documents([str(EXAMPLES / "catalog")])
    objects = [*site("site-a", []), *site("site-b", [CORDON]), *llama(None)]
    placed = renderer.documents([*catalog, *(Document("scenario", o) for o in objects)])

    def only_site_a_down(objects: list[Obj]) -> None:
        site_a_down(objects)
        find(objects, "InferenceCluster", "site-b")["spec"]["taints"] = [CORDON]

    down = placed.edit(only_site_a_down, now="2026-12-01T10:10:00Z")

    assert down.result.converged, down.result.errors
    assert replicas(down) == {("site-a", "Unknown"): 4}
    ready = down.condition("ModelDeployment", "llama", "ReplicasReady")
    assert (ready["status"], ready["message"]) == ("False", "0 of 4 replicas serving")
    # Still routed: removing the only replicas from routing would drop the model.
    assert len(down.all("ModelEndpoint")) == 4
