"""The KServe backend: one LLMInferenceService per replica.

KServe merges its well-known presets into the service by container name, and
its presets call the engine container `main`, so the team's `engine` container
is renamed `main` here: under any other name KServe would run the preset's
container beside it. KServe owns ports, probes and routing, so Modelplane adds
only the pool pin, toleration, claim, labels and the node-rank env; a multi-node
role on an NVLink pool also claims its ComputeDomain's IMEX channel, in the
head's `template` and the followers' `worker` alike (`compute_domains`).

KServe fetches the weights itself (its storage initializer reads
`spec.model.uri`), so a replica on a KServe cluster needs the deployment's
`spec.model.uri`, or a model cache, whose URI it names then (KServe serves it from
the cache's local copy at `KSERVE_MODEL_PATH`); `spec.model.name` is the served
name KServe gives the engine.
On a cluster with a Gateway, `spec.router` attaches the service to it (see
`traffic.kserve_router`).
"""

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Final

from modelplane.core.issues import InvalidInputError
from modelplane.core.kinds import LLM_INFERENCE_SERVICE
from modelplane.core.topology import Topology
from modelplane.core.vocabulary import (
    LABEL_POD_SECURITY_AUDIT,
    LABEL_POD_SECURITY_WARN,
    POD_SECURITY_DEFAULT_LEVEL,
    Reason,
)
from modelplane.stack.components import KSERVE

from .identity import identity_labels, service_name
from .model import ClusterInput, ReplicaInput, RoleInput
from .pods import ENV_MODEL_PATH, role_shape, shape_pod
from .traffic import kserve_router

# A KServe cluster's tenant namespaces warn and audit at Pod Security baseline but
# do not enforce it: KServe v0.20's own multi-node presets
# (config/llmisvcconfig/config-llm-worker-data-parallel.yaml and its decode and
# prefill variants) add IPC_LOCK, SYS_RAWIO and NET_RAW to the engine, which
# baseline refuses, so enforcing it would keep every multi-node replica from
# starting. A platform that runs no multi-node replica there enforces a level
# through spec.tenancy.labels.
POD_SECURITY: Final[Mapping[str, str]] = {
    LABEL_POD_SECURITY_AUDIT: POD_SECURITY_DEFAULT_LEVEL,
    LABEL_POD_SECURITY_WARN: POD_SECURITY_DEFAULT_LEVEL,
}
PRESET_CAPABILITIES: Final = frozenset({"IPC_LOCK", "SYS_RAWIO", "NET_RAW"})
"""What those multi-node presets add to the engine container."""


def granted_capabilities(topology: Topology) -> frozenset[str]:
    """The capabilities KServe gives a role's engine itself: a worker spanning nodes runs
    with a multi-node preset (data-parallel: the pipeline-parallel one is never placed
    here, `unsupported`), which adds `PRESET_CAPABILITIES`. A team's template asking
    for them there asks for nothing more than it gets, so the fleet scheduler's Pod
    Security check lets them pass (`scheduling.pod_security`)."""
    return PRESET_CAPABILITIES if topology.nodes_per_worker > 1 else frozenset()


KSERVE_ENGINE_CONTAINER = "main"
KSERVE_MODEL_PATH = "/mnt/models"
"""Where KServe puts the weights in its `main` container (v0.20
`constants.DefaultModelLocalMountPath`): a cache's local copy is mounted there
read-only (`attachPVCModelArtifact`), head and followers alike."""


def mixes_parallelism(topology: Topology) -> bool:
    """Pipeline and data parallelism in one worker: KServe's webhook refuses it."""
    return (topology.data > 1 or topology.data_local > 1) and topology.pipeline > 1


PIPELINE_PARALLEL_PRESET = "kserve-config-llm-worker-pipeline-parallel"
"""The preset KServe's controller merges into a multi-node pipeline-parallel service
(`combineBaseRefsConfig`; `kserve-config-llm-{decode,prefill}-worker-pipeline-parallel`
under P/D). KServe v0.20 ships none of the three: they are left out of
`WellKnownDefaultConfigs` and of `config/llmisvcconfig`, so the controller finds no
such LLMInferenceServiceConfig (`ConfigNotFound`), creates nothing and the service
never becomes Ready."""


def runs_pipeline_workers(topology: Topology) -> bool:
    """A worker spanning nodes by pipeline stages: what needs the preset KServe lacks.

    Pipeline stages always span nodes (`nodes_per_worker` multiplies by `pipeline`),
    so such a service has a `worker` and KServe picks the pipeline-parallel preset.
    """
    return topology.pipeline > 1 and topology.nodes_per_worker > 1


def unsupported(names_weights: bool, topologies: Iterable[Topology]) -> str | None:
    """Why a KServe cluster cannot run a replica of this shape, or None.

    `names_weights`: the deployment sets `spec.model.uri` or a `spec.model.cacheRef`
    (`model` renders the cache's URI then). The fleet scheduler asks before it places
    a replica on a KServe cluster, so a replica the functions below would refuse, or
    one KServe's controller cannot run (a multi-node pipeline-parallel worker), never
    lands there. The renderer still renders the latter, so a replica placed there
    before this rule keeps its objects until `scheduling.moves` replaces it.
    """
    if not names_weights:
        return "KServe downloads the weights from spec.model.uri, which the deployment does not set"
    shapes = tuple(topologies)
    if any(mixes_parallelism(t) for t in shapes):
        return "KServe cannot combine pipeline and data parallelism in one worker"
    if any(runs_pipeline_workers(t) for t in shapes):
        return (
            f"KServe {KSERVE.version} ships no pipeline-parallel preset "
            f"({PIPELINE_PARALLEL_PRESET} or its decode and prefill variants), "
            "so a multi-node pipeline-parallel service never becomes Ready"
        )
    return None


def parallelism(role: RoleInput) -> dict[str, int]:
    """`spec.parallelism` for a role, in the form KServe's webhook accepts.

    KServe sizes a multi-node worker from data/dataLocal when data parallelism
    is set and from pipeline otherwise, and refuses both at once; a field set
    to 1 still counts as set. So only degrees above 1 are written, and a
    topology needing both cannot be expressed.
    """
    topology = role.placed.topology
    data_parallel = topology.data > 1 or topology.data_local > 1
    if mixes_parallelism(topology):
        raise InvalidInputError.at(
            f"{role.path}.topology",
            "KServe cannot combine pipeline and data parallelism in one worker; "
            "use a Native cluster for this topology",
        )
    result = {"tensor": topology.tensor}
    if topology.pipeline > 1:
        result["pipeline"] = topology.pipeline
    if data_parallel:
        result["data"] = topology.data
        result["dataLocal"] = topology.data_local
    return result


def _workload(
    replica: ReplicaInput, role: RoleInput, claim: str | None, channel: str | None
) -> dict[str, Any]:
    """A WorkloadSpec (replicas, parallelism, labels, template, worker) for one role.
    `channel`: the IMEX channel template of a multi-node role's ComputeDomain, which
    the head (`template`) and the followers (`worker`) both claim."""
    shape = role_shape(
        replica,
        role,
        claim,
        serving=False,
        container_name=KSERVE_ENGINE_CONTAINER,
        channel=channel,
    )
    if replica.model is not None and replica.model.cache is not None:
        # The same engine args as on a Native cluster (`--model=$(MODELPLANE_MODEL_PATH)`)
        # then read the cache: undefined, Kubernetes would pass the text unexpanded.
        shape = replace(shape, env=(*shape.env, (ENV_MODEL_PATH, KSERVE_MODEL_PATH)))
    pod = shape_pod(role.template, f"{role.path}.template", shape)
    workload: dict[str, Any] = {
        "replicas": role.placed.workers,
        "parallelism": parallelism(role),
        # KServe copies these onto the pod templates only, never the workload.
        "labels": pod["metadata"]["labels"],
    }
    if "annotations" in pod["metadata"]:
        workload["annotations"] = pod["metadata"]["annotations"]
    workload["template"] = pod["spec"]
    if role.placed.topology.nodes_per_worker > 1:
        # The presence of `worker` is what makes KServe build a LeaderWorkerSet;
        # head and followers are the same engine on different ranks.
        workload["worker"] = shape_pod(role.template, f"{role.path}.template", shape)["spec"]
    return workload


def model(replica: ReplicaInput, cluster: ClusterInput) -> dict[str, str]:
    """`spec.model`: what KServe downloads and the name it serves it under. With a model
    cache, its URI: KServe serves a URI a LocalModelNamespaceCache of the service's
    namespace holds from the local copy."""
    cache = replica.model.cache if replica.model is not None else None
    if replica.model is not None and cache is not None:
        return {"uri": cache.uri, "name": replica.model.name}
    if replica.model is None or not replica.model.uri:
        raise InvalidInputError.at(
            "spec.model.uri",
            f"is required on InferenceCluster {cluster.name}: KServe downloads the weights "
            "from it; set spec.model.uri on the ModelDeployment",
            Reason.MODEL_URI_REQUIRED,
        )
    return {"uri": replica.model.uri, "name": replica.model.name}


def llm_inference_service(
    replica: ReplicaInput,
    cluster: ClusterInput,
    *,
    namespace: str,
    claims: dict[str, str],
    channels: dict[str, str],
) -> dict[str, Any]:
    """The replica's LLMInferenceService; `claims` maps role to claim template name,
    `channels` multi-node role to its ComputeDomain's channel template name."""
    main = replica.workers or replica.decode
    if main is None:
        raise InvalidInputError.at(
            "spec.workers", "is required: a replica is unified or decode and prefill"
        )
    spec: dict[str, Any] = {"model": model(replica, cluster)}
    spec.update(
        _workload(replica, main, claims.get(main.placed.role), channels.get(main.placed.role))
    )
    if replica.prefill is not None:
        prefill = replica.prefill
        spec["prefill"] = _workload(
            replica, prefill, claims.get(prefill.placed.role), channels.get(prefill.placed.role)
        )
    router = kserve_router(replica, cluster)
    if router is not None:
        spec["router"] = router
    return {
        "apiVersion": LLM_INFERENCE_SERVICE.api_version,
        "kind": LLM_INFERENCE_SERVICE.kind,
        "metadata": {
            "name": service_name(replica),
            "namespace": namespace,
            "labels": identity_labels(replica, main.placed.role),
        },
        "spec": spec,
    }
