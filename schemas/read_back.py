"""The schemas schemas/generate.py writes models from besides the XRDs: the metadata and
conditions every model shares, and each kind a function reads back from a provider or a
workload cluster (`READ_BACK`), limited to what is read."""

# The part of Kubernetes' ObjectMeta a function reads: identity, labels, annotations
# and owner references. Server-set fields are kept as plain strings.
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
OBJECT_META = {
    "title": "ObjectMeta",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "generateName": {"type": "string"},
        "namespace": {"type": "string"},
        "uid": {"type": "string"},
        "resourceVersion": {"type": "string"},
        "generation": {"type": "integer"},
        "creationTimestamp": {"type": "string"},
        "deletionTimestamp": {"type": "string"},
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "ownerReferences": {
            "type": "array",
            "items": {
                "title": "OwnerReference",
                "type": "object",
                "required": ["apiVersion", "kind", "name"],
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "name": {"type": "string"},
                    "uid": {"type": "string"},
                    "controller": {"type": "boolean"},
                    "blockOwnerDeletion": {"type": "boolean"},
                },
            },
        },
    },
}


# A condition as Crossplane writes it on every composite and managed resource
# (crossplane-runtime apis/common/v1/condition.go, `Condition`). Crossplane's CRDs
# also require a reason and a lastTransitionTime; a reader requires only what it
# decides on, so a condition written without a reason still reads. The time stays a
# string: it is compared and copied, never computed with.
CONDITION = {
    "title": "Condition",
    "type": "object",
    "required": ["type", "status"],
    "properties": {
        "type": {"type": "string"},
        "status": {"type": "string"},
        "reason": {"type": "string"},
        "message": {"type": "string"},
        "lastTransitionTime": {"type": "string"},
        "observedGeneration": {"type": "integer"},
    },
}
CONDITIONS = {"type": "array", "items": CONDITION}


def envelope(api_version: str, kind: str) -> dict:
    return {
        "apiVersion": {"type": "string", "const": api_version},
        "kind": {"type": "string", "const": kind},
        "metadata": OBJECT_META,
    }


# What the providers report back, as their CRDs define it (../shared/crds:
# kubernetes.m.crossplane.io_objects.yaml, helm.m.crossplane.io_releases.yaml), limited
# to the status: a function reads back an Object's or a Release's status, never its
# spec, which it composed itself.
READ_BACK = {
    "Object": {
        "type": "object",
        "properties": {
            **envelope("kubernetes.m.crossplane.io/v1alpha1", "Object"),
            "status": {
                "title": "ObjectStatus",
                "type": "object",
                "properties": {
                    "atProvider": {
                        "title": "ObjectObservation",
                        "type": "object",
                        "properties": {
                            # The remote object as the provider last read it.
                            "manifest": {"type": "object", "additionalProperties": True},
                        },
                    },
                    "conditions": CONDITIONS,
                },
            },
        },
    },
    "Release": {
        "type": "object",
        "properties": {
            **envelope("helm.m.crossplane.io/v1beta1", "Release"),
            "status": {
                "title": "ReleaseStatus",
                "type": "object",
                "properties": {
                    "atProvider": {
                        "title": "ReleaseObservation",
                        "type": "object",
                        "properties": {
                            "digest": {"type": "string"},
                            "ownershipTaken": {"type": "boolean"},
                            "releaseDescription": {"type": "string"},
                            "revision": {"type": "integer"},
                            "state": {"type": "string"},
                            "version": {"type": "string"},
                        },
                    },
                    "conditions": CONDITIONS,
                },
            },
        },
    },
}


# The workload kinds Modelplane renders and reads back from a cluster to decide
# whether they serve (`modelplane.core.kinds`), limited to the fields it reads: the
# replica count asked for and the status the kind's controller reports. As their
# upstream definitions type them: Kubernetes apps/v1 DeploymentSpec and
# DeploymentStatus (kubernetes/api apps/v1/types.go), and the CRDs in ../shared/crds
# (leaderworkerset.x-k8s.io_leaderworkersets.yaml v1,
# serving.kserve.io_llminferenceservices.yaml v1alpha2); tests/schema holds them to
# those CRDs. Only the fields read are listed: the rest of a read-back is ignored.
_REPLICAS = {"type": "integer"}


def _workload(api_version: str, kind: str, counts: tuple[str, ...]) -> dict:
    return {
        "type": "object",
        "properties": {
            **envelope(api_version, kind),
            "spec": {
                "title": f"{kind}Spec",
                "type": "object",
                "properties": {"replicas": _REPLICAS},
            },
            "status": {
                "title": f"{kind}Status",
                "type": "object",
                "properties": {
                    **dict.fromkeys(counts, _REPLICAS),
                    "observedGeneration": {"type": "integer"},
                    "conditions": CONDITIONS,
                },
            },
        },
    }


WORKLOADS = {
    "Deployment": _workload(
        "apps/v1",
        "Deployment",
        ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas"),
    ),
    "LeaderWorkerSet": _workload(
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
        ("replicas", "readyReplicas", "updatedReplicas"),
    ),
    "LLMInferenceService": _workload("serving.kserve.io/v1alpha2", "LLMInferenceService", ()),
}
# Every kind read back from somewhere else than Modelplane's own APIs.
READ_BACK.update(WORKLOADS)

# Gateway API's Gateway, as gateway.networking.k8s.io_gateways.yaml (v1) in ../shared/crds
# types it, limited to the status compose-inference-gateway reads back: the addresses
# the Gateway reports and its conditions. `value` is required upstream; here a missing
# one only means the entry names no address.
READ_BACK["Gateway"] = {
    "type": "object",
    "properties": {
        **envelope("gateway.networking.k8s.io/v1", "Gateway"),
        "status": {
            "title": "GatewayStatus",
            "type": "object",
            "properties": {
                "addresses": {
                    "type": "array",
                    "items": {
                        "title": "GatewayStatusAddress",
                        "type": "object",
                        "properties": {"type": {"type": "string"}, "value": {"type": "string"}},
                    },
                },
                "conditions": CONDITIONS,
            },
        },
    },
}
