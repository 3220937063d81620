"""What the upjet AWS and GCP providers report on the cloud kinds a created cluster
composes, so a preview of one converges as it would on a control plane.

Once a managed resource is Ready its provider fills `status.atProvider` with what
the cloud reports. The simulation reports what the chain reads, plausibly and
deterministically (identifiers are digests of the resource's name):

- an EKS Cluster its endpoint, version and ACTIVE status; a GKE Cluster its
  endpoint and master version;
- an EKS NodeGroup ACTIVE at the size it was asked for (`scalingConfig`, or
  `initProvider` for an autoscaled group when it is created); a GKE NodePool its
  per-zone `nodeCount` and one managed instance group per zone. The cloud's
  autoscaler is not simulated: an autoscaled group stays at the size it has. As EKS
  does, an update whose bounds leave that size outside them, with no size of its
  own, is refused (`refusal`), the group left as it was;
- every other kind the identifier its cloud assigns (`vpc-...`, `subnet-...`);
- a resource with `writeConnectionSecretToRef` (EKS ClusterAuth, GKE Cluster)
  writes its connection Secret, with a `kubeconfig` key that reaches the
  cluster's endpoint, in its own namespace, as a namespaced managed resource does,
  controlled by the resource.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any, Final, cast

from modelplane.core.naming import digest
from modelplane.core.observed import reported_count
from modelplane.provisioning.cloud import EXTERNAL_NAME
from modelplane_cli.render.world import Obj, ObjectKey, View, fake_uid, group_of

_AWS: Final = "aws.m.upbound.io"
_GCP: Final = "gcp.m.upbound.io"
# The identifier prefix AWS gives each EC2 kind.
_EC2_IDS: Final = {
    "VPC": "vpc",
    "Subnet": "subnet",
    "InternetGateway": "igw",
    "NATGateway": "nat",
    "EIP": "eipalloc",
    "RouteTable": "rtb",
    "RouteTableAssociation": "rtbassoc",
    "Route": "r-rtb",
}
# The zones GKE spreads a regional pool over when none are named.
_REGIONAL_ZONES: Final = 3
SECRET_TYPE: Final = "connection.crossplane.io/v1alpha1"


def _map(value: object) -> Mapping[str, Any]:
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def is_cloud(obj: View) -> bool:
    group = group_of(str(obj.get("apiVersion", "")))
    return group.endswith((_AWS, _GCP))


def _name(obj: View) -> str:
    return str(_map(obj.get("metadata")).get("name", ""))


def _cloud_name(obj: View) -> str:
    """The name the cloud knows a resource by: its external name when it sets one (a
    node group's, which differs from its `metadata.name`), else `metadata.name`, which
    Crossplane takes as the external name of a resource created without one."""
    external = _map(_map(obj.get("metadata")).get("annotations")).get(EXTERNAL_NAME)
    return external if isinstance(external, str) and external else _name(obj)


def _id(obj: View, length: int = 17) -> str:
    meta = _map(obj.get("metadata"))
    return digest(str(meta.get("namespace", "")), _name(obj), str(obj.get("kind")), length=length)


def _fields(obj: View) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    spec = _map(obj.get("spec"))
    return _map(spec.get("forProvider")), _map(spec.get("initProvider"))


def _eks_endpoint(obj: View, region: str) -> str:
    return f"https://{_id(obj, 32).upper()}.gr7.{region}.eks.amazonaws.com"


def _gke_endpoint(obj: View) -> str:
    octets = bytes.fromhex(_id(obj, 4))
    return f"34.{octets[0]}.{octets[1]}.{max(1, octets[0] ^ octets[1])}"


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def _reported_size(obj: View) -> int | None:
    """The size the simulated cloud last reported for a node group, None before."""
    reported = _map(_map(_map(obj.get("status")).get("atProvider")).get("scalingConfig"))
    return reported_count(reported.get("desiredSize"))


def _node_group(
    obj: View, for_provider: Mapping[str, Any], init: Mapping[str, Any]
) -> dict[str, Any]:
    asked = _map(for_provider.get("scalingConfig"))
    scaling = {**_map(init.get("scalingConfig")), **asked}
    low, high = int(scaling.get("minSize") or 0), int(scaling.get("maxSize") or 0)
    # A size in forProvider is set; without one, an existing group keeps its own
    # (upjet leaves initProvider to creation), and one being created takes initProvider's.
    current = _reported_size(obj)
    size = asked.get("desiredSize") if "desiredSize" in asked or current is None else current
    scaling["desiredSize"] = _clamp(int(size or 0), low, high)
    return {
        "status": "ACTIVE",
        "scalingConfig": dict(scaling),
        "labels": dict(_map(for_provider.get("labels"))),
        "taint": list(for_provider.get("taint") or []),
    }


def _node_pool(
    obj: View, for_provider: Mapping[str, Any], init: Mapping[str, Any]
) -> dict[str, Any]:
    location = str(for_provider.get("location", ""))
    zones = list(for_provider.get("nodeLocations") or [])
    if not zones:
        regional = location.count("-") < 2
        zones = [f"{location}-{c}" for c in "abc"[:_REGIONAL_ZONES]] if regional else [location]
    project = str(for_provider.get("project", ""))
    groups = [
        f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}/"
        f"instanceGroupManagers/gke-{_cloud_name(obj)}-{_id(obj, 8)}-grp"
        for zone in zones
    ]
    per_zone = int(init.get("initialNodeCount") or for_provider.get("nodeCount") or 0)
    limits = _map(for_provider.get("autoscaling"))
    if "totalMinNodeCount" in limits or "totalMaxNodeCount" in limits:
        # GKE's autoscaler keeps the pool's total within its limits.
        low = int(limits.get("totalMinNodeCount") or 0)
        high = int(limits.get("totalMaxNodeCount") or 0)
        total = _clamp(per_zone * len(zones), low, high)
        per_zone = -(-total // len(zones))
    return {
        "nodeCount": per_zone,
        "managedInstanceGroupUrls": groups,
        "instanceGroupUrls": groups,
        "autoscaling": dict(limits),
    }


def at_provider(obj: View) -> dict[str, Any] | None:
    """What the cloud reports on `obj` once its provider has created it; None for
    a kind this simulation does not know."""
    if not is_cloud(obj):
        return None
    kind = str(obj.get("kind"))
    group = group_of(str(obj.get("apiVersion", "")))
    for_provider, init = _fields(obj)
    region = str(for_provider.get("region", ""))
    if group.startswith("eks.") and kind == "Cluster":
        return {
            "id": _cloud_name(obj),
            "arn": f"arn:aws:eks:{region}:000000000000:cluster/{_cloud_name(obj)}",
            "endpoint": _eks_endpoint(obj, region),
            "status": "ACTIVE",
            "version": for_provider.get("version"),
            "certificateAuthority": [{"data": base64.b64encode(b"simulated CA").decode()}],
        }
    if group.startswith("eks.") and kind == "NodeGroup":
        return _node_group(obj, for_provider, init)
    if group.startswith("container.") and kind == "Cluster":
        version = str(for_provider.get("minMasterVersion", ""))
        return {
            "id": f"projects/{for_provider.get('project')}/locations/"
            f"{for_provider.get('location')}/clusters/{_cloud_name(obj)}",
            "endpoint": _gke_endpoint(obj),
            "masterVersion": f"{version}.0-gke.1000" if version else None,
        }
    if group.startswith("container.") and kind == "NodePool":
        return _node_pool(obj, for_provider, init)
    if group.startswith("ec2.") and kind in _EC2_IDS:
        return {"id": f"{_EC2_IDS[kind]}-{_id(obj)}"}
    if kind == "ClusterAuth":
        # It reports only when it last refreshed the token; a preview has no such time.
        return {}
    if group.startswith("iam.") and kind == "Role":
        return {"id": _cloud_name(obj), "arn": f"arn:aws:iam::000000000000:role/{_cloud_name(obj)}"}
    return {"id": _cloud_name(obj)}


def refusal(obj: View) -> str | None:
    """Why the cloud refuses the update `obj` asks for, in its provider's words, or None.

    EKS refuses a node group's bounds that leave its current size outside them unless
    the update sets a size too (UpdateNodegroupConfig's InvalidParameterException, which
    the AWS provider reports as its async update's failure)."""
    if not (is_cloud(obj) and obj.get("kind") == "NodeGroup"):
        return None
    if not group_of(str(obj.get("apiVersion", ""))).startswith("eks."):
        return None
    current = _reported_size(obj)
    asked = _map(_fields(obj)[0].get("scalingConfig"))
    if current is None or "desiredSize" in asked:
        return None
    low, high = int(asked.get("minSize") or 0), int(asked.get("maxSize") or 0)
    if current < low:
        why = f"Minimum capacity {low} can't be greater than desired size {current}"
    elif current > high:
        why = "desiredSize can't be greater than maxSize"
    else:
        return None
    return (
        f"async update failed: failed to update the resource: updating EKS Node Group "
        f"({_cloud_name(obj)}) config: InvalidParameterException: {why}"
    )


def _kubeconfig(name: str, server: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {name}\n  cluster:\n    server: {server}\n"
        f"contexts:\n- name: {name}\n  context: {{cluster: {name}, user: {name}}}\n"
        f"current-context: {name}\n"
        f"users:\n- name: {name}\n  user: {{token: simulated}}\n"
    )


def _server(obj: View) -> str:
    """The API server a connection Secret's kubeconfig reaches: an EKS ClusterAuth's
    cluster's (named by its reference, beside it), a GKE Cluster's own."""
    for_provider, _ = _fields(obj)
    if obj.get("kind") == "ClusterAuth":
        cluster = str(_map(for_provider.get("clusterNameRef")).get("name", ""))
        meta = {**_map(obj.get("metadata")), "name": cluster}
        return _eks_endpoint({"kind": "Cluster", "metadata": meta}, str(for_provider.get("region")))
    return f"https://{_gke_endpoint(obj)}"


def connection_secret(obj: View) -> Obj | None:
    """The Secret a cloud managed resource writes its connection details to, if it names one."""
    ref = _map(_map(obj.get("spec")).get("writeConnectionSecretToRef"))
    name = ref.get("name")
    namespace = _map(obj.get("metadata")).get("namespace")
    if not is_cloud(obj) or not isinstance(name, str) or not name:
        return None
    if not isinstance(namespace, str) or not namespace:
        return None
    kubeconfig = _kubeconfig(_cloud_name(obj), _server(obj))
    # crossplane-runtime's connection publisher makes the managed resource the
    # Secret's controller, so the Secret goes when the resource does.
    owner: dict[str, Any] = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "name": _name(obj),
        "controller": True,
    }
    uid = _map(obj.get("metadata")).get("uid")
    owner["uid"] = uid if isinstance(uid, str) and uid else fake_uid(ObjectKey.of(obj))
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner]},
        "type": SECRET_TYPE,
        "data": {"kubeconfig": base64.b64encode(kubeconfig.encode()).decode()},
    }
