"""Every cluster of a grouped match-trace row can be found.

Status groups clusters turned down for the same reason into one row. It used to
name only the first of them and count the rest, so on a fleet with twelve
development clusters no selector of the example deployments matches, eleven of
them appeared nowhere in the output. Now the row lists its first 10 clusters, the
summary says how many it does not list, and `--trace` prints every one.
"""

from __future__ import annotations

from pathlib import Path

from modelplane_cli import yamlio

from .cli import EXAMPLES, Fleet, Obj, modelplane

DEV = [f"dev-{i:02d}" for i in range(12)]


def _dev_cluster(name: str) -> list[Obj]:
    """A small cluster neither kimi-k2 (tier: production) nor deepseek-r1 (region
    us-east or us-west) selects, and its kubeconfig Secret."""
    secret = f"{name}-kubeconfig"
    cluster: Obj = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name, "labels": {"tier": "dev", "region": "dev"}},
        "spec": {
            "cluster": {
                "source": "Existing",
                "existing": {"secretRef": {"name": secret, "namespace": "modelplane-system"}},
            },
            "kubernetesVersion": "1.34",
            "backend": {"type": "Native"},
            "nodePools": [{"name": "l4", "className": "l4-1x", "nodeCount": 1}],
        },
    }
    return [
        cluster,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": secret, "namespace": "modelplane-system"},
            "type": "Opaque",
            "stringData": {"kubeconfig": f"# the kubeconfig of {name}"},
        },
    ]


def _section(out: str, title: str) -> list[str]:
    """The lines of the summary's sections whose heading starts with `title`."""
    blocks = [b for b in out.split("\n\n") if b.startswith(title)]
    return [line for b in blocks for line in b.splitlines()]


def test_every_cluster_of_a_grouped_row_is_reachable(tmp_path: Path) -> None:
    fleet = Fleet(tmp_path / "repo", "catalog", "fleet")
    docs = [doc for name in DEV for doc in _dev_cluster(name)]
    fleet.path("fleet/dev.yaml").write_text(yamlio.dump_all(docs))

    run = modelplane("render", fleet.root)

    assert run.code == 0, run.err
    # Not traced: deepseek-r1's row for the dev clusters names the first 10 and says
    # how to see the rest, which the old status left unreachable.
    table = _section(run.out, "MATCH TRACE  ModelDeployment ml-team-prod/deepseek-r1")
    (row,) = [line for line in table if "dev-00" in line and "ClusterSelectorMismatch" in line]
    assert all(name in row for name in DEV[:10])
    assert "dev-10" not in row and "dev-11" not in row
    assert table[-1] == (
        "(2 more rejections not listed: --trace ml-team-prod/deepseek-r1 prints every cluster)"
    )
    # kimi-k2 lists its clusters by its matchLabels (tier: production): Crossplane
    # never sends it the dev clusters, so its trace has no row for them.
    kimi = _section(run.out, "MATCH TRACE  ModelDeployment ml-team-prod/kimi-k2")
    assert not any("dev-" in line for line in kimi)

    traced = modelplane("render", fleet.root, "--trace", "deepseek-r1")

    assert traced.code == 0, traced.err
    # Traced: deepseek-r1's status names all twelve, and --trace prints one line each.
    deepseek = _section(traced.out, "MATCH TRACE  ModelDeployment ml-team-prod/deepseek-r1")
    (row,) = [line for line in deepseek if "dev-00" in line and "ClusterSelectorMismatch" in line]
    assert all(name in row for name in DEV)
    assert not deepseek[-1].startswith("(")
    every = _section(
        traced.out, "MATCH TRACE, EVERY CLUSTER  ModelDeployment ml-team-prod/deepseek-r1"
    )
    listed = [line.split()[0] for line in every[2:] if "ClusterSelectorMismatch" in line]
    # deepseek-r1 selects by region In (us-east, us-west), which no label List
    # expresses: it receives every cluster and also rejects prod-eu-west.
    assert sorted(listed) == sorted([*DEV, "prod-eu-west"])


def test_trace_of_a_deployment_the_input_does_not_hold_fails_before_rendering() -> None:
    run = modelplane("render", EXAMPLES / "catalog", EXAMPLES / "fleet", "--trace", "nosuch")

    assert run.code == 1
    assert run.errors() == ["error: --trace nosuch: no ModelDeployment of that name in the input"]


def test_trace_goes_to_standard_error_beside_yaml() -> None:
    run = modelplane(
        "render", EXAMPLES / "catalog", EXAMPLES / "fleet", "-o", "yaml", "--trace", "kimi-k2"
    )

    assert run.code == 0, run.err
    assert run.one("ModelDeployment", "kimi-k2")["status"]["matchTrace"]
    assert "MATCH TRACE, EVERY CLUSTER  ModelDeployment ml-team-prod/kimi-k2" in run.err
    assert "MATCH TRACE" not in run.out
