"""The renderer's inputs, built from the generated models of the API objects.

The glue reads a ModelReplica and its InferenceCluster into `modelplane_models`
once; the models already hold what the XRDs' schemas say (types, bounds, required
fields, enums). What a model cannot say is checked here, every problem an Issue
naming its field: the rules the XRDs state in CEL (one role shape; dataLocal
divides data), names the API server would take but DRA would not, and the
identity a renderer needs from metadata.
"""

import copy
from collections.abc import Iterable

from modelplane_models import model_replica
from modelplane_models.inference_cluster import (
    BackendType,
    EndpointPicker,
    FailureMode,
    InferenceCluster,
)
from modelplane_models.model_replica import ModelReplica, ReplicaRole
from modelplane_models.model_replica import Spec as ReplicaSpec

from modelplane.conventions.tenancy import read_tenancy
from modelplane.core import naming
from modelplane.core.devices import read_constraints
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.kinds import LLM_INFERENCE_SERVICE
from modelplane.core.placement import PlacedRole
from modelplane.core.template_size import template_issues
from modelplane.core.vocabulary import ANNOTATION_BACKEND, ROLE_DECODE, ROLE_PREFILL, ROLE_WORKERS
from modelplane.provisioning import kubernetes_version

from .model import (
    DEFAULT_KUBERNETES_VERSION,
    ClusterInput,
    GatewayInput,
    ModelInput,
    ReplicaInput,
    RoleInput,
)

# The endpoint picker image when a cluster's spec.gateway names none (the XRD's default).
DEFAULT_PICKER_IMAGE = EndpointPicker().image or ""


def _required(value: str | None, path: str, issues: list[Issue]) -> str:
    if not value:
        issues.append(Issue(path, "is required"))
        return ""
    return value


def _request_issues(request: model_replica.ClaimRequest, path: str, issues: list[Issue]) -> None:
    if not naming.is_dns_label(request.name):
        issues.append(
            Issue(f"{path}.name", f"{request.name!r} must be a DNS label (a DRA request name)")
        )
    if not naming.is_dns_subdomain(request.deviceClassName):
        issues.append(
            Issue(f"{path}.deviceClassName", f"{request.deviceClassName!r} must be a DNS subdomain")
        )


def _role(model: ReplicaRole, role: str, issues: list[Issue]) -> RoleInput:
    """The role as the scheduler recorded it (`PlacedRole.read`), with what rendering
    requires of it beyond that reading: DNS names DRA takes, request names unique
    and the only ones its constraints name, and a template within bounds."""
    path = f"spec.{role}"
    requests = model.deviceRequests or ()
    for i, request in enumerate(requests):
        _request_issues(request, f"{path}.deviceRequests[{i}]", issues)
    seen: set[str] = set()
    for i, request in enumerate(requests):
        if request.name in seen:
            issues.append(
                Issue(
                    f"{path}.deviceRequests[{i}].name", f"duplicate request name {request.name!r}"
                )
            )
        seen.add(request.name)
    read_constraints(
        model.constraints,
        seen,
        path,
        lambda name: f"{name!r} is not a request of {path}.deviceRequests",
        issues,
    )
    issues.extend(template_issues(model.template, f"{path}.template"))
    return RoleInput(
        placed=PlacedRole.read(role, model, issues),
        # A private deep copy: rendering must never alias the caller's object.
        template=copy.deepcopy(model.template),
    )


def _roles(spec: ReplicaSpec, issues: list[Issue]) -> dict[str, RoleInput]:
    """The replica's roles: unified `workers`, or `decode` and `prefill` together."""
    declared: tuple[tuple[str, ReplicaRole | None], ...] = (
        (ROLE_WORKERS, spec.workers),
        (ROLE_DECODE, spec.decode),
        (ROLE_PREFILL, spec.prefill),
    )
    given: dict[str, ReplicaRole] = {r: m for r, m in declared if m is not None}
    split = [role for role in (ROLE_DECODE, ROLE_PREFILL) if role in given]
    if ROLE_WORKERS in given and split:
        issues.append(Issue(f"spec.{split[0]}", "must not be set together with spec.workers"))
        return {}
    if ROLE_WORKERS not in given and len(split) != 2:
        missing = (
            {ROLE_DECODE: ROLE_PREFILL, ROLE_PREFILL: ROLE_DECODE}[split[0]]
            if split
            else ROLE_WORKERS
        )
        issues.append(
            Issue(
                f"spec.{missing}",
                "is required: a replica is unified (workers) or decode and prefill",
            )
        )
        return {}
    return {role: _role(model, role, issues) for role, model in given.items()}


def replica_input(replica: ModelReplica) -> ReplicaInput:
    """What the renderer needs of a ModelReplica; InvalidInputError naming every bad field."""
    issues: list[Issue] = []
    metadata = replica.metadata
    name = _required(metadata.name if metadata else None, "metadata.name", issues)
    namespace = _required(metadata.namespace if metadata else None, "metadata.namespace", issues)
    spec = replica.spec
    if spec is None:
        raise InvalidInputError([*issues, Issue("spec", "is required")])
    roles = _roles(spec, issues)
    backend = _recorded_backend(replica, issues)
    if issues:
        raise InvalidInputError(issues)
    model = spec.model
    return ReplicaInput(
        namespace=namespace,
        name=name,
        deployment_name=spec.deploymentName,
        cluster_name=spec.clusterName,
        priority=spec.priority or None,
        workers=roles.get(ROLE_WORKERS),
        decode=roles.get(ROLE_DECODE),
        prefill=roles.get(ROLE_PREFILL),
        # The scheduler writes the served name resolved; a replica without one
        # serves under its deployment's name, as the API's default says.
        model=None if model is None else ModelInput(model.name or spec.deploymentName, model.uri),
        backend=backend,
    )


def rendered_with(kinds: Iterable[str]) -> BackendType | None:
    """The backend that rendered workloads of these kinds (a replica's published
    `status.workloads[].kind`): KServe for an LLMInferenceService, Native for the rest;
    None for none. A replica placed before replicas recorded their backend
    (`modelplane.ai/backend`) is read by it, so a switch of its cluster's backend moves
    it as it moves a replica that records one, instead of changing its workload's kind
    under its Object."""
    found = set(kinds)
    if not found:
        return None
    return BackendType.K_SERVE if LLM_INFERENCE_SERVICE.kind in found else BackendType.NATIVE


def _published_kinds(replica: ModelReplica) -> list[str]:
    """The kinds of the workloads the replica last published (`status.workloads`)."""
    status = replica.status
    return [w.kind for w in (status.workloads if status else None) or () if w.kind]


def replica_backend(replica: ModelReplica) -> BackendType | None:
    """The backend a replica renders with: the one the fleet scheduler recorded
    (`modelplane.ai/backend`), else the one its published workloads were rendered with
    (`rendered_with`); None when neither says (it then renders with its cluster's). A
    recorded value no cluster can have reads as None here; `replica_input` refuses it."""
    issues: list[Issue] = []
    found = _recorded_backend(replica, issues)
    return None if issues else found


def _recorded_backend(replica: ModelReplica, issues: list[Issue]) -> BackendType | None:
    """`replica_backend`, with an issue for a recorded value no cluster can have."""
    metadata = replica.metadata
    value = ((metadata.annotations if metadata else None) or {}).get(ANNOTATION_BACKEND)
    if not value:
        return rendered_with(_published_kinds(replica))
    try:
        return BackendType(value)
    except ValueError:
        known = ", ".join(b.value for b in BackendType)
        issues.append(
            Issue(
                f"metadata.annotations[{ANNOTATION_BACKEND}]",
                f"names backend {value!r}; the fleet scheduler writes one of {known}",
            )
        )
        return None


def cluster_input(cluster: InferenceCluster) -> ClusterInput:
    """What the renderer needs of an InferenceCluster; InvalidInputError naming every bad field."""
    issues: list[Issue] = []
    name = _required(cluster.metadata.name if cluster.metadata else None, "metadata.name", issues)
    spec = cluster.spec
    if spec is None:
        issues.append(Issue("spec", "is required"))
    if spec is None or issues:
        raise InvalidInputError(issues)
    # An unvalidated schema default is the plain string, not the enum member:
    # BackendType(...) takes either.
    backend = spec.backend.type if spec.backend and spec.backend.type else BackendType.NATIVE
    tenancy, problems = read_tenancy(spec.tenancy, name)
    if problems:
        raise InvalidInputError(
            [
                Issue("spec.clusterName", f"InferenceCluster {name!r} {p}", p.reason)
                for p in problems
            ]
        )
    return ClusterInput(
        name=name,
        backend=BackendType(backend),
        pools=tuple(sorted({pool.name for pool in spec.nodePools})),
        kubernetes_version=kubernetes_version(cluster) or DEFAULT_KUBERNETES_VERSION,
        tenancy=tenancy,
        gateway=_gateway(cluster),
        nvlink_domains=_nvlink_domains(cluster),
    )


def _nvlink_domains(cluster: InferenceCluster) -> tuple[tuple[str, int], ...]:
    """The published pools' NVLink domain sizes (status.gpuPools[].nvlinkDomainNodes)."""
    pools = cluster.status.gpuPools if cluster.status else None
    return tuple(
        sorted((p.name, p.nvlinkDomainNodes) for p in pools or () if p.name and p.nvlinkDomainNodes)
    )


def _gateway(cluster: InferenceCluster) -> GatewayInput | None:
    """The cluster's Gateway as spec.gateway declares it, with the address its status
    publishes (None until the Gateway reports one)."""
    declared = cluster.spec.gateway if cluster.spec else None
    if declared is None:
        return None
    picker = declared.endpointPicker or EndpointPicker()
    published = cluster.status.gateway if cluster.status else None
    return GatewayInput(
        class_name=declared.gatewayClassName,
        picker_image=picker.image or DEFAULT_PICKER_IMAGE,
        # The schema's default picker (GIE's stock EPP) has no P/D plugins.
        pd_picker_image=(
            picker.image if picker.image and picker.image != DEFAULT_PICKER_IMAGE else None
        ),
        # The enum member or, as an unvalidated schema default, the plain string: a
        # StrEnum prints as its value either way.
        failure_mode=FailureMode(picker.failureMode or FailureMode.FAIL_OPEN),
        address=(published.address or None) if published else None,
    )
