"""The fleet's ModelReplicas as the scheduler reads them, each with the deployment that
owns it by Crossplane's record."""

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass

from modelplane_models.model_replica import ModelReplica
from modelplane_models.shapes import OwnerReference as ReplicaOwner

from modelplane.core.bounded import ByIdentity
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.placement import PlacedRole
from modelplane.core.vocabulary import (
    ANNOTATION_BACKEND,
    ANNOTATION_COMPOSITION_RESOURCE_NAME,
    ANNOTATION_REVISION,
    API_VERSION,
    MODEL_DEPLOYMENT,
)
from modelplane.scheduling.model import (
    ROLE_NAMES,
    Deployment,
    ExistingReplica,
)
from modelplane.workloads.inputs import replica_backend


def read_replica(
    model: ModelReplica, name: str, namespace: str, owner: str | None, *, serving: bool = False
) -> ExistingReplica:
    """A ModelReplica as its spec records it, with its creation time and whether it is
    serving (its `Serving` condition, which the caller reads: the model has no
    conditions); InvalidInputError naming every field the scheduler cannot use."""
    problems: list[Issue] = []
    spec = model.spec
    if spec is None:
        raise InvalidInputError([Issue("spec", "is required")])
    roles = tuple(
        PlacedRole.read(role_name, role, problems)
        for role_name in ROLE_NAMES
        if (role := getattr(spec, role_name)) is not None
    )
    if not name:
        problems.append(Issue("metadata.name", "is required"))
    if problems:
        raise InvalidInputError(problems)
    created = model.metadata.creationTimestamp if model.metadata else None
    annotations = (model.metadata.annotations if model.metadata else None) or {}
    return ExistingReplica(
        namespace,
        name,
        owner,
        spec.clusterName,
        spec.index,
        roles,
        priority=spec.priority or None,
        serving=serving,
        created=created or None,
        revision=annotations.get(ANNOTATION_REVISION, ""),
        backend=annotations.get(ANNOTATION_BACKEND) or _rendered_with(model),
    )


def _rendered_with(model: ModelReplica) -> str | None:
    """What a replica that records no backend was rendered with, as its published
    workloads say (`workloads.inputs.replica_backend`); None when it published none."""
    found = replica_backend(model)
    return None if found is None else found.value


def composer(replica: ModelReplica) -> ReplicaOwner | None:
    """The ModelDeployment that composed `replica`, as Crossplane marks what it composes:
    a composition-resource-name annotation and a controller reference to the composite."""
    metadata = replica.metadata
    if metadata is None or ANNOTATION_COMPOSITION_RESOURCE_NAME not in (metadata.annotations or {}):
        return None
    for owner in metadata.ownerReferences or ():
        if owner.controller and owner.apiVersion == API_VERSION and owner.kind == MODEL_DEPLOYMENT:
            return owner
    return None


class ReplicaMemo:
    """Replicas read in earlier calls, by the very model they were read from and what
    the caller said of it (its owner, and whether it serves).

    As with `FleetMemo`, a long-running function reads the same fetched objects into
    the same model instances call after call, and models are never changed once
    read, so the same model has the same name, namespace and composer (`Heads`),
    and the same model and the same words read to the same replica. At most
    `entries` models are kept; past that, everything is dropped and read again.
    """

    def __init__(self, entries: int = 25_000) -> None:
        self._replicas = ByIdentity[ModelReplica, ReadModel](entries)

    def model(self, model: ModelReplica) -> "ReadModel":
        """The model's heads, and the replicas read from it, kept from earlier calls."""
        return self._replicas.get_or_make(model, ReadModel.of)


Heads = tuple[str, str, str | None, str | None]
"""A fleet replica's name, namespace, and the name and uid of the ModelDeployment
that composed it (`composer`; None, None when none did)."""


@dataclass(frozen=True, slots=True)
class ReadModel:
    """One fleet ModelReplica model: its heads, and the replicas read from it so far."""

    model: ModelReplica
    heads: Heads
    replicas: dict[tuple[str | None, bool], ExistingReplica]

    @classmethod
    def of(cls, model: ModelReplica) -> "ReadModel":
        metadata = model.metadata
        name = (metadata.name if metadata else None) or ""
        namespace = (metadata.namespace if metadata else None) or ""
        owner = composer(model)
        if owner is None:
            return cls(model, (name, namespace, None, None), {})
        return cls(model, (name, namespace, owner.name, owner.uid), {})

    def read(self, owner: str | None, serving: bool) -> ExistingReplica:
        """`read_replica` of the model under its heads; InvalidInputError as it raises it
        (not kept: a model that cannot be read is read, and refused, again)."""
        key = (owner, serving)
        found = self.replicas.get(key)
        if found is None:
            name, namespace, _, _ = self.heads
            found = read_replica(self.model, name, namespace, owner, serving=serving)
            # Equal whoever reads it first: a race costs a second read, never a wrong one.
            self.replicas[key] = found
        return found


@dataclass(frozen=True)
class KnownReplicas:
    """The replicas the scheduler charges and keeps, and how many it had to skip."""

    replicas: tuple[ExistingReplica, ...]
    skipped: int
    """Other deployments' replicas that cannot be read: their capacity is not charged."""


def existing_replicas(
    deployment: Deployment,
    uid: str | None,
    composed: Mapping[str, ModelReplica],
    fleet: Iterable[ModelReplica],
    serving: Set[tuple[str, str]] = frozenset(),
    memo: ReplicaMemo | None = None,
    retiring: Set[str] = frozenset(),
) -> KnownReplicas:
    """Every ModelReplica of the fleet, each with the deployment that owns it, and whether
    it is serving (`serving` holds the (namespace, name) of those whose `Serving`
    condition is True).

    A replica is this deployment's when Crossplane says so: it is among the
    resources Crossplane observed as this composite's (`composed`, keyed by
    composition-resource-name, which is also the name the scheduler keeps), or it
    carries Crossplane's marks of a resource this deployment composed (`composer`,
    its controller reference's uid matching `uid` when both are known). Labels are
    never read: editing one must not make the scheduler charge a running replica
    elsewhere or drop it. A composed replica that cannot be read raises
    InvalidInputError (nothing can be decided without it); any other is skipped
    and counted. With a memo, a fleet model read before is not read again.

    A replica named in `retiring` (this deployment's, removed by an earlier decision
    but still running until no route sends to it) is no longer the deployment's to
    decide on: it is charged as another's replica is, since it holds its devices
    until it is deleted, and never kept, counted or removed again.
    """
    read_model = ReadModel.of if memo is None else memo.model
    found: dict[tuple[str, str], ExistingReplica] = {}
    skipped = 0
    for model in fleet:
        known = read_model(model)
        name, namespace, owner, owner_uid = known.heads
        if (
            owner == deployment.name
            and namespace == deployment.namespace
            and uid
            and owner_uid
            and owner_uid != uid
        ):
            owner = None  # composed by an earlier deployment of the same name, being deleted
        if namespace == deployment.namespace and name in retiring:
            owner = None
        try:
            found[(namespace, name)] = known.read(owner, (namespace, name) in serving)
        except InvalidInputError:
            skipped += 1
    problems: list[Issue] = []
    for key, model in sorted(composed.items()):
        # Crossplane composes a namespaced composite's resources into its namespace.
        namespace = deployment.namespace
        owner = None if key in retiring else deployment.name
        try:
            # Read afresh: these models are parsed anew on every call, never kept.
            found[(namespace, key)] = read_replica(
                model, key, namespace, owner, serving=(namespace, key) in serving
            )
        except InvalidInputError as invalid:
            problems.extend(issue.under(f"modelreplicas[{key}]") for issue in invalid.issues)
    if problems:
        raise InvalidInputError(problems)
    return KnownReplicas(tuple(found[key] for key in sorted(found)), skipped)
