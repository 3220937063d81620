"""A multi-node role on a pool with NVLink domains gets a ComputeDomain and its channel."""

from typing import Any

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.core.kinds import pod_sites
from modelplane.workloads import render_replica

from .inputs import read_cluster, read_replica

Obj = dict[str, Any]


def _cluster(build: Any, domain: int | None, backend: str = "Native") -> Obj:
    obj = build.cluster(backend=backend)
    if domain is not None:
        obj["status"] = {
            "gpuPools": [
                {"name": "h100", "className": "c", "nodes": 4, "nvlinkDomainNodes": domain},
            ]
        }
    return obj


def _render(
    build: Any,
    topology: dict[str, int],
    domain: int | None,
    count: int = 1,
    backend: str = "Native",
) -> Any:
    replica = build.replica(workers=build.role(count=count, topology=topology))
    return render_replica(read_replica(replica), read_cluster(_cluster(build, domain, backend)))


def test_a_multi_node_role_gets_a_compute_domain_of_its_nodes(build: Any) -> None:
    rendered = _render(build, {"tensor": 8, "pipeline": 2}, 4, count=2)
    objects = {o.key: o.manifest for o in rendered.objects()}
    domain = objects["compute-domain-workers"]
    assert domain["kind"] == "ComputeDomain"
    assert domain["spec"] == {
        "numNodes": 4,
        "channel": {"resourceClaimTemplate": {"name": "kimi-k2-5ab63-workers-nvlink-channel"}},
    }
    specs = [spec for site in pod_sites(objects["workload-workers"]) for _, spec in site.specs]
    assert len(specs) == 2
    for spec in specs:
        assert [c["name"] for c in spec["resourceClaims"]] == ["devices", "nvlink-channel"]
        assert spec["resourceClaims"][1]["resourceClaimTemplateName"] == (
            "kimi-k2-5ab63-workers-nvlink-channel"
        )
        assert spec["containers"][0]["resources"]["claims"] == [
            {"name": "devices"},
            {"name": "nvlink-channel"},
        ]


@pytest.mark.parametrize(
    ("topology", "domain"),
    [({"tensor": 8}, 4), ({"tensor": 8, "pipeline": 2}, None)],
    ids=["single-node role", "pool without domains"],
)
def test_no_compute_domain_without_both(
    build: Any, topology: dict[str, int], domain: int | None
) -> None:
    rendered = _render(build, topology, domain)
    assert not any(o.key.startswith("compute-domain") for o in rendered.objects())


CHANNEL_CLAIMS = [{"name": "devices"}, {"name": "nvlink-channel"}]


def _claims_channel(spec: Obj, template: str) -> bool:
    """The pod spec claims the devices and `template`'s channel, and its engine uses both."""
    names = [c["name"] for c in spec["resourceClaims"]]
    [engine] = spec["containers"]
    return (
        names == ["devices", "nvlink-channel"]
        and spec["resourceClaims"][1]["resourceClaimTemplateName"] == template
        and engine["resources"]["claims"] == CHANNEL_CLAIMS
    )


def test_a_kserve_role_claims_the_channel_in_template_and_worker(build: Any) -> None:
    replica = build.replica(workers=build.role(topology={"tensor": 8, "pipeline": 2}))
    rendered = render_replica(read_replica(replica), read_cluster(_cluster(build, 4, "KServe")))
    objects = {o.key: o.manifest for o in rendered.objects()}
    assert objects["compute-domain-workers"]["spec"]["numNodes"] == 2
    spec = objects["workload-workers"]["spec"]
    for pod in (spec["template"], spec["worker"]):
        assert _claims_channel(pod, "kimi-k2-5ab63-workers-nvlink-channel")


def test_a_kserve_replica_gives_a_channel_only_to_its_multi_node_role(build: Any) -> None:
    replica = build.replica(
        decode=build.role(topology={"tensor": 8, "pipeline": 2}),
        prefill=build.role(topology={"tensor": 8}),
    )
    rendered = render_replica(read_replica(replica), read_cluster(_cluster(build, 4, "KServe")))
    objects = {o.key: o.manifest for o in rendered.objects()}
    assert sorted(k for k in objects if k.startswith("compute-domain")) == ["compute-domain-decode"]
    spec = objects["workload-decode"]["spec"]
    for pod in (spec["template"], spec["worker"]):
        assert _claims_channel(pod, "kimi-k2-5ab63-decode-nvlink-channel")
    prefill = spec["prefill"]
    assert "worker" not in prefill
    assert [c["name"] for c in prefill["template"]["resourceClaims"]] == ["devices"]


@pytest.mark.parametrize("backend", ["Native", "KServe"])
def test_a_role_larger_than_a_domain_names_the_field(build: Any, backend: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        _render(build, {"tensor": 8, "pipeline": 2}, 2, count=2, backend=backend)
    [issue] = raised.value.issues
    assert issue.path == "spec.workers.nodePoolName"
    assert "spec.topology.nvlinkDomainNodes is 2" in issue.message
    assert "spans 4 nodes" in issue.message
