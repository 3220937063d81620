"""Keep replicas off clusters whose backend cannot run them.

A cluster renders its replicas with its backend (`spec.backend.type`), and a
backend may refuse a replica for what the deployment lacks or asks: KServe
downloads the weights itself, so it needs `spec.model.uri` or a
`spec.model.cacheRef` (whose URI the replica's LLMInferenceService names), its
webhook refuses pipeline and data parallelism in one worker, and KServe v0.20
ships no preset for a multi-node pipeline-parallel worker (`workloads.kserve` is
the one home of these rules). The filter asks this module before placing, so such a
replica is never placed there; `moves` asks it of a replica already there, which
then moves make-before-break, however it got there (the deployment was edited,
the cluster's backend changed).
"""

from modelplane_models.inference_cluster import BackendType

from modelplane.scheduling.model import Cluster, Deployment
from modelplane.scheduling.rejections import Rejected, Rejection
from modelplane.workloads.kserve import unsupported

KSERVE = BackendType.K_SERVE.value


def refusal(cluster: Cluster, deployment: Deployment) -> Rejected | None:
    """Why the cluster's backend cannot run a replica of the deployment, if it cannot."""
    if cluster.backend != KSERVE:
        return None
    # Any cacheRef counts, without reading the ModelCache: a valid one has a URI (its
    # schema requires it), and one that is absent or invalid holds the whole decision
    # (`scheduling.cache`), so nothing is placed on its word alone.
    names_weights = bool(deployment.model_uri or deployment.model_cache)
    why = unsupported(names_weights, (role.topology for role in deployment.roles))
    if why is None:
        return None
    return Rejected(Rejection.BACKEND_UNSUPPORTED, f"its backend is {KSERVE}: {why}")
