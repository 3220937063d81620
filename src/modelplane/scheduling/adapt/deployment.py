"""A ModelDeployment as the scheduler reads it: its roles, their requests, where it may go,
how a change rolls out, and the revision its replicas render."""

import json
import re
from collections.abc import Sequence
from typing import Any

from modelplane_models.model_deployment import (
    ModelDeployment,
    NodeSelector,
    TolerationOperator,
    Workers,
)
from modelplane_models.model_deployment import SpreadConstraint as SpreadModel
from modelplane_models.model_deployment import Toleration as TolerationModel
from modelplane_models.shapes import LabelSelector as LabelSelectorModel

from modelplane.core.devices import Constraint, read_constraints
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.labels import key_error
from modelplane.core.naming import digest, is_dns_label
from modelplane.core.pod_security import baseline_issues
from modelplane.core.template_size import template_issues
from modelplane.core.written import as_written
from modelplane.scheduling.adapt.checks import object_name, topology
from modelplane.scheduling.model import (
    DECODE_ROLE,
    PREFILL_ROLE,
    UNIFIED_ROLE,
    Deployment,
    DeviceRequest,
    IntOrPercent,
    LabelRequirement,
    LabelSelector,
    Role,
    RollingUpdate,
    SpreadConstraint,
    Toleration,
)
from modelplane.workloads.kserve import granted_capabilities
from modelplane.workloads.pods import ENGINE_CONTAINER

_PERCENT = re.compile(r"^(100|[1-9]?[0-9])%$")
_ZERO = (0, "0%")


def _requests(node_selector: NodeSelector, path: str, problems: list[Issue]) -> list[DeviceRequest]:
    requests: list[DeviceRequest] = []
    seen: set[str] = set()
    for i, device in enumerate(node_selector.devices):
        if device.name in seen:
            problems.append(
                Issue(f"{path}.devices[{i}].name", f"duplicate device request {device.name!r}")
            )
        seen.add(device.name)
        requests.append(
            DeviceRequest(
                name=device.name,
                count=1 if device.count is None else device.count,
                selectors=tuple(s.cel for s in device.selectors or ()),
            )
        )
    return requests


def _constraints(
    node_selector: NodeSelector, path: str, problems: list[Issue]
) -> tuple[Constraint, ...]:
    """`nodeSelector.constraints`, each naming only requests of the same nodeSelector
    (DRA refuses a claim whose constraint names a request it lacks)."""
    read = read_constraints(
        node_selector.constraints,
        {device.name for device in node_selector.devices},
        path,
        lambda name: f"names no device request: {name!r} is not in {path}.devices",
        problems,
    )
    return tuple(read)


def _role(
    name: str,
    node_selector: NodeSelector | None,
    workers: Workers | None,
    path: str,
    problems: list[Issue],
    baseline: tuple[list[Issue], list[Issue]],
) -> Role:
    """One role; `baseline` gathers what Pod Security baseline refuses in its template,
    as a Native cluster renders it and as a KServe one does (whose multi-node presets
    give the engine capabilities of their own: `workloads.kserve.granted_capabilities`)."""
    prefix = f"{path}."
    if node_selector is None:
        problems.append(Issue(f"{prefix}nodeSelector", "is required"))
    if workers is None:
        problems.append(Issue(f"{prefix}workers", "is required"))
    requests = (
        () if node_selector is None else _requests(node_selector, f"{prefix}nodeSelector", problems)
    )
    constraints = (
        ()
        if node_selector is None
        else _constraints(node_selector, f"{prefix}nodeSelector", problems)
    )
    if workers is None:
        return Role(name, tuple(requests), constraints=constraints)
    # What the replicas render is checked here, before any replica carries it.
    template = as_written(workers.template)
    problems.extend(template_issues(template, f"{prefix}workers.template"))
    shape = topology(workers.topology, f"{prefix}workers.topology", problems)
    at = f"{prefix}workers.template"
    baseline[0].extend(baseline_issues(template, at))
    granted = {ENGINE_CONTAINER: granted_capabilities(shape)}
    baseline[1].extend(baseline_issues(template, at, granted))
    return Role(
        name,
        tuple(requests),
        workers=1 if workers.count is None else workers.count,
        topology=shape,
        constraints=constraints,
    )


def label_selector(selector: LabelSelectorModel) -> LabelSelector:
    """Kept as written: the scheduler validates label syntax, naming each bad key."""
    return LabelSelector(
        match_labels=tuple(sorted((selector.matchLabels or {}).items())),
        match_expressions=tuple(
            LabelRequirement(e.key, e.operator.value, tuple(v.root for v in e.values or ()))
            for e in selector.matchExpressions or ()
        ),
    )


def _tolerations(
    models: Sequence[TolerationModel], problems: list[Issue]
) -> tuple[Toleration, ...]:
    """The tolerations, checking what the XRD's rules say (as Kubernetes does for a pod's)."""
    out: list[Toleration] = []
    for i, model in enumerate(models):
        operator = TolerationOperator(model.operator or TolerationOperator.EQUAL)
        if operator is TolerationOperator.EXISTS and model.value:
            problems.append(
                Issue(f"spec.tolerations[{i}].value", "must be empty when operator is Exists")
            )
        if not model.key and operator is not TolerationOperator.EXISTS:
            problems.append(
                Issue(f"spec.tolerations[{i}].operator", "must be Exists when key is empty")
            )
        out.append(Toleration(model.key or "", operator, model.value or "", model.effect))
    return tuple(out)


def _spread(models: Sequence[SpreadModel], problems: list[Issue]) -> tuple[SpreadConstraint, ...]:
    """The spread constraints, checked as the API server checks a pod's: a valid label
    key, and one constraint per (topologyKey, whenUnsatisfiable)."""
    out: list[SpreadConstraint] = []
    seen: set[tuple[str, str]] = set()
    for i, model in enumerate(models):
        path = f"spec.placement.spreadConstraints[{i}]"
        error = key_error(model.topologyKey)
        if error is not None:
            problems.append(Issue(f"{path}.topologyKey", f"{model.topologyKey!r}: {error}"))
        when = model.whenUnsatisfiable
        if (model.topologyKey, when) in seen:
            problems.append(
                Issue(
                    path,
                    f"duplicate constraint for topologyKey {model.topologyKey!r} "
                    f"and whenUnsatisfiable {when.value}",
                )
            )
        seen.add((model.topologyKey, when))
        out.append(SpreadConstraint(model.topologyKey, model.maxSkew, when))
    return tuple(out)


def _int_or_percent(value: object, default: str, path: str, problems: list[Issue]) -> IntOrPercent:
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # a number through protobuf's Struct is a double
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1000:
        return value
    if isinstance(value, str) and _PERCENT.match(value):
        return value
    problems.append(
        Issue(
            path, f"must be a number from 0 to 1000 or a percentage from 0% to 100%, not {value!r}"
        )
    )
    return default


def _strategy(model: ModelDeployment, problems: list[Issue]) -> RollingUpdate:
    strategy = model.spec.strategy if model.spec else None
    rolling = strategy.rollingUpdate if strategy is not None else None
    if rolling is None:
        return RollingUpdate()
    path = "spec.strategy.rollingUpdate"
    found = RollingUpdate(
        _int_or_percent(rolling.maxUnavailable, "25%", f"{path}.maxUnavailable", problems),
        _int_or_percent(rolling.maxSurge, "25%", f"{path}.maxSurge", problems),
    )
    if found.max_unavailable in _ZERO and found.max_surge in _ZERO:
        problems.append(Issue(path, "maxUnavailable and maxSurge may not both be 0"))
    return found


def revision(model: ModelDeployment) -> str:
    """A digest of what every replica renders from the deployment: the model, the
    priority, and each role's device requests and workers (template included). Not
    the replica count, the clusterSelector or the strategy: those change where and
    how many replicas run, not what one runs."""
    spec = model.spec
    if spec is None:
        return ""
    rendered: dict[str, Any] = spec.model_dump(
        mode="json",
        by_alias=True,
        exclude_none=True,
        include={"priority", "model", "nodeSelector", "workers", "decode", "prefill"},
        warnings=False,
    )
    return digest(json.dumps(rendered, sort_keys=True, separators=(",", ":")), length=10)


def spec_digest(model: ModelDeployment) -> str:
    """A digest of the whole spec, which a decision over the fleet records with the
    match trace it publishes (`status.matchTraceSpec`): any edit changes it, those
    that change no replica's revision (a clusterSelector, tolerations, spread) too."""
    spec = model.spec
    if spec is None:
        return ""
    written = spec.model_dump(mode="json", by_alias=True, exclude_none=True, warnings=False)
    return digest(json.dumps(written, sort_keys=True, separators=(",", ":")), length=10)


def read_deployment(model: ModelDeployment) -> Deployment:
    """What the scheduler needs of a ModelDeployment; InvalidInputError naming every
    field its CEL rules would refuse (both roles or neither, a role's parts together,
    unique request names, a topology whose nodes hold whole data-parallel ranks).

    Nothing is kept here: compose-model-deployment's runner keeps the result per
    model (`Kept.deployment`), the one caller that reads a model more than once."""
    problems: list[Issue] = []
    metadata = model.metadata
    name = object_name(metadata.name if metadata else None, "metadata.name", problems)
    namespace = (metadata.namespace if metadata else None) or ""
    if not is_dns_label(namespace):
        problems.append(
            Issue("metadata.namespace", "is required" if not namespace else "must be a DNS label")
        )
    spec = model.spec
    if spec is None:
        raise InvalidInputError([*problems, Issue("spec", "is required")])
    roles: list[Role] = []
    baseline: tuple[list[Issue], list[Issue]] = ([], [])
    if spec.decode is not None or spec.prefill is not None:
        for key, value in (("nodeSelector", spec.nodeSelector), ("workers", spec.workers)):
            if value is not None:
                problems.append(Issue(f"spec.{key}", "must not be set with decode and prefill"))
        for role_name, role in ((DECODE_ROLE, spec.decode), (PREFILL_ROLE, spec.prefill)):
            if role is None:
                problems.append(
                    Issue(f"spec.{role_name}", "is required when the other role is set")
                )
            else:
                roles.append(
                    _role(
                        role_name,
                        role.nodeSelector,
                        role.workers,
                        f"spec.{role_name}",
                        problems,
                        baseline,
                    )
                )
    else:
        roles.append(
            _role(UNIFIED_ROLE, spec.nodeSelector, spec.workers, "spec", problems, baseline)
        )
    tolerations = _tolerations(spec.tolerations or (), problems)
    strategy = _strategy(model, problems)
    placement = spec.placement
    spread = _spread((placement.spreadConstraints or ()) if placement else (), problems)
    if problems:
        raise InvalidInputError(problems)
    return Deployment(
        name=name,
        namespace=namespace,
        replicas=1 if spec.replicas is None else spec.replicas,
        roles=tuple(roles),
        priority=spec.priority,
        cluster_selector=None
        if spec.clusterSelector is None
        else label_selector(spec.clusterSelector),
        tolerations=tolerations,
        strategy=strategy,
        spread=spread,
        model_uri=spec.model.uri if spec.model is not None else None,
        model_cache=spec.model.cacheRef.name
        if spec.model is not None and spec.model.cacheRef is not None
        else None,
        revision=revision(model),
        baseline_issues=tuple(baseline[0]),
        kserve_baseline_issues=tuple(baseline[1]),
    )
