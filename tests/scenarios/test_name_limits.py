"""Every name in a rendered world fits its Kubernetes limit, for the longest names.

A cluster name may be a whole DNS label (63 characters) and a ModelDeployment name
as long as its workload names allow; every name composed from them (Objects,
Releases, Usages, ProviderConfigs, workloads, Services, HTTPRoutes,
InferencePools, ModelReplicas...) and every label value must still fit: 63 for a
DNS label (Namespaces, Services, label values), 53 for a Helm release name
(provider-helm installs a Release under its `metadata.name`), 253 for the rest.
"""

from typing import Any

import pytest

from modelplane_cli.render import Document, read_documents

from .fleets import EXAMPLES, Fleet, Renderer
from .test_examples import SETS

Obj = dict[str, Any]
DNS_LABEL = 63
HELM_RELEASE = 53
SUBDOMAIN = 253
# Kinds whose names are DNS labels (RFC 1123 or 1035) rather than subdomains.
LABEL_NAMED = {"Namespace", "Service"}


RENAMED = {"InferenceCluster", "ModelDeployment"}
# Where the examples name a cluster or a deployment.
REFERENCES = {"clusterRef", "deployment", "deploymentRef"}


def padded(name: str) -> str:
    """`name` made a whole DNS label long (63 characters), still unique."""
    return f"{name}-" + "a" * (62 - len(name))


def _renamed(value: Any, names: dict[str, str], parent: str = "") -> Any:
    if isinstance(value, list):
        return [_renamed(v, names, parent) for v in value]
    if not isinstance(value, dict):
        return value
    obj: Obj = value
    out = {k: _renamed(v, names, k) for k, v in obj.items()}
    if parent in REFERENCES and obj.get("name") in names:
        out["name"] = names[obj["name"]]
    return out


def render_long(renderer: Renderer, example: str) -> Fleet:
    """The example with every cluster and deployment name 63 characters long."""
    documents = read_documents([str(EXAMPLES / p) for p in SETS[example]])
    names = {
        d.obj["metadata"]["name"]: padded(d.obj["metadata"]["name"])
        for d in documents
        if d.obj["kind"] in RENAMED
    }
    renamed: list[Document] = []
    for d in documents:
        obj = _renamed(d.obj, names)
        if obj["kind"] in RENAMED:
            obj["metadata"] = {**obj["metadata"], "name": names[obj["metadata"]["name"]]}
        renamed.append(Document(d.source, obj, d.observed))
    return renderer.documents(renamed)


def limit(kind: str) -> int:
    if kind == "Release":
        return HELM_RELEASE
    return DNS_LABEL if kind in LABEL_NAMED else SUBDOMAIN


def problems(value: Any, path: str, kind: str = "") -> list[str]:
    """Every name and label value under `value` over its limit, with its path."""
    found: list[str] = []
    if isinstance(value, dict):
        obj: Obj = value
        kind = str(obj.get("kind", kind))
        meta = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            name = str(meta["name"])
            if len(name) > limit(kind):
                found.append(f"{path}: {kind} name {name!r} ({len(name)} > {limit(kind)})")
        for key in ("labels", "matchLabels"):
            labels = obj.get(key)
            if isinstance(labels, dict):
                for label, label_value in labels.items():
                    if isinstance(label_value, str) and len(label_value) > DNS_LABEL:
                        found.append(f"{path}.{key}[{label}]: {len(label_value)} characters")
        for key, child in obj.items():
            found += problems(child, f"{path}.{key}", kind)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            found += problems(child, f"{path}[{i}]", kind)
    return found


@pytest.mark.parametrize("example", ["stack", "serving", "kai"])
def test_every_name_fits_for_63_character_clusters_and_deployments(
    renderer: Renderer, example: str
) -> None:
    fleet = render_long(renderer, example)

    assert fleet.result.ok, fleet.result.errors
    assert fleet.all("ModelReplica"), "the long-named clusters run replicas"
    assert all(len(r["spec"]["clusterName"]) == DNS_LABEL for r in fleet.all("ModelReplica"))
    assert all(len(r["spec"]["deploymentName"]) == DNS_LABEL for r in fleet.all("ModelReplica"))
    found = [
        p
        for obj in fleet.objects
        for p in problems(obj, f"{obj['kind']}/{obj['metadata']['name']}")
    ]
    assert found == []


def test_long_cluster_names_still_install_their_releases(renderer: Renderer) -> None:
    fleet = render_long(renderer, "stack")
    names = [r["metadata"]["name"] for r in fleet.all("Release")]
    assert names and max(map(len, names)) <= HELM_RELEASE
    assert len(set(names)) == len(names)
    assert any(len(n) == HELM_RELEASE for n in names)  # cut to the limit, not further
