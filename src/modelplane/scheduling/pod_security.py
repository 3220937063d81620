"""Keep a team's template off clusters whose tenant namespaces must not run it.

A cluster's tenant namespaces stand for a Pod Security level (`Cluster.pod_security`:
the platform's enforce label, else `baseline`). A deployment whose templates break
`baseline` (`Deployment.baseline_issues`: host namespaces, privileged containers,
hostPath volumes, added capabilities...) is refused on every cluster that does not
run its tenants `privileged`. The filter asks before placing, so such a template
never reaches a cluster whose admission would refuse its pods (Native), or would
only warn (KServe, where the namespaces cannot enforce the level: KServe's own
presets add capabilities it refuses); `moves` asks of a replica already there, which
then moves make-before-break, so a template edited to ask for host access is never
rolled out in place there. `restricted`'s further rules are the cluster's own
admission's to enforce.
"""

from modelplane_models.inference_cluster import BackendType

from modelplane.core.pod_security import LEVEL_PRIVILEGED
from modelplane.scheduling.model import Cluster, Deployment
from modelplane.scheduling.rejections import Rejected, Rejection


def refusal(cluster: Cluster, deployment: Deployment) -> Rejected | None:
    """Why the cluster's tenant namespaces must not run the deployment's template, if so."""
    if cluster.pod_security == LEVEL_PRIVILEGED:
        return None
    kserve = cluster.backend == BackendType.K_SERVE.value
    issues = deployment.kserve_baseline_issues if kserve else deployment.baseline_issues
    first, *rest = issues or (None,)
    if first is None:
        return None
    more = f" (and {len(rest)} more)" if rest else ""
    return Rejected(
        Rejection.POD_SECURITY_VIOLATION,
        f"its tenant namespaces run Pod Security {cluster.pod_security}: {first}{more}",
    )
