"""Names and identity labels of the objects a replica puts on a workload cluster.

Names are readable when they fit (`<replica>-<role>`) and a stable hash when
they do not; either way they are a pure function of the replica's identity, so
re-rendering never renames anything.
"""

from modelplane.conventions.schedulers import strictest_lws_name_max
from modelplane.core import labels as label_syntax
from modelplane.core import naming
from modelplane.core.issues import InvalidInputError
from modelplane.core.kinds import leader_worker_set as lws
from modelplane.core.kinds import llm_inference_service as kserve
from modelplane.core.vocabulary import (
    LABEL_DEPLOYMENT,
    LABEL_MANAGED_BY,
    LABEL_REPLICA,
    LABEL_ROLE,
    MANAGED_BY,
    Reason,
)

from .model import ReplicaInput

# A Deployment's name reaches its pods' hostnames, so keep it a DNS label.
DEPLOYMENT_NAME_MAX = naming.DNS_LABEL_MAX
# A LeaderWorkerSet's name reaches StatefulSet revision-hash and pod-name labels
# (63 characters): LWS documents 51 - digits; a scheduler may cut it further
# (Kueue's pod labels, with its WorkloadIdentifierAnnotations gate off, to 39).
# Rendering within the strictest limit keeps every scheduler's conventions open.
LEADER_WORKER_SET_NAME_MAX = strictest_lws_name_max() or lws.NAME_BASE_MAX
# KServe derives `<name>-kserve-mn-prefill` for the multi-node prefill LWS, and
# that LWS name must itself fit the limit above (39 - 18 = 21).
LLM_INFERENCE_SERVICE_NAME_MAX = LEADER_WORKER_SET_NAME_MAX - len(kserve.PREFILL_LWS_SUFFIX)
CLAIM_TEMPLATE_NAME_MAX = naming.DNS_LABEL_MAX


def _fit(readable: str, max_len: int, *identity: str) -> str:
    if naming.is_dns_label(readable) and len(readable) <= max_len:
        return readable
    # A replica name may hold dots (a DNS subdomain); a hashed name keeps the
    # readable head but the digest over the real identity keeps it unique.
    return naming.hashed_name(readable.replace(".", "-"), *identity, max_len=max_len)


def workload_name(replica: ReplicaInput, role: str, max_len: int) -> str:
    """The name of a role's Deployment or LeaderWorkerSet."""
    return _fit(f"{replica.name}-{role}", max_len, replica.namespace, replica.name, role)


def service_name(replica: ReplicaInput) -> str:
    """The name of a replica's LLMInferenceService (one per replica)."""
    return _fit(replica.name, LLM_INFERENCE_SERVICE_NAME_MAX, replica.namespace, replica.name)


def _role_object_name(replica: ReplicaInput, role: str, suffix: str) -> str:
    """A per-role object's name: `<replica>-<role>-<suffix>`, fitted to the claim
    template limit the way every composed name is (`naming.fitted`)."""
    return _fit(
        f"{replica.name}-{role}-{suffix}",
        CLAIM_TEMPLATE_NAME_MAX,
        replica.namespace,
        replica.name,
        role,
        suffix,
    )


def compute_domain_name(replica: ReplicaInput, role: str) -> str:
    """The name of a multi-node role's ComputeDomain (`compute_domains`)."""
    return _role_object_name(replica, role, "nvlink")


def channel_template_name(replica: ReplicaInput, role: str) -> str:
    """The ResourceClaimTemplate the role's ComputeDomain creates for its IMEX channel."""
    return _role_object_name(replica, role, "nvlink-channel")


def claim_template_name(replica: ReplicaInput, role: str) -> str:
    """The ResourceClaimTemplate of the role's devices."""
    return _role_object_name(replica, role, "devices")


def check_identity(replica: ReplicaInput) -> None:
    """Reject identities that cannot be label values (they select the pods)."""
    for field, value in (
        ("metadata.name", replica.name),
        ("spec.deploymentName", replica.deployment_name),
    ):
        problem = label_syntax.value_error(value)
        if problem:
            too_long = len(value) > label_syntax.LABEL_VALUE_MAX
            reason = Reason.NAME_TOO_LONG if too_long else Reason.INVALID_SPEC
            raise InvalidInputError.at(
                field, f"{value!r} is used as a label value and {problem}", reason
            )


def identity_labels(replica: ReplicaInput, role: str) -> dict[str, str]:
    """The labels that say whose a workload object is, sorted by key."""
    labels = {
        LABEL_DEPLOYMENT: replica.deployment_name,
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_REPLICA: replica.name,
        LABEL_ROLE: role,
    }
    return dict(sorted(labels.items()))


def selector_labels(replica: ReplicaInput, role: str) -> dict[str, str]:
    """The immutable subset that selects a role's pods within the tenant namespace."""
    return {LABEL_REPLICA: replica.name, LABEL_ROLE: role}
