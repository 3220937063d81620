"""InferenceClusters as the scheduler reads them, sharing what equal classes share."""

import threading
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, replace
from typing import Any, cast

from modelplane_models.inference_cluster import BackendType, InferenceCluster, PublishedPool
from modelplane_models.shapes import Device
from pydantic import TypeAdapter

from modelplane.conventions import SchedulingConfig, parse_scheduling
from modelplane.conventions.tenancy import enforced_level
from modelplane.core.bounded import ByIdentity
from modelplane.core.devices import DeviceSpec, read_device
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.naming import is_dns_label
from modelplane.core.node_taints import NodeTaint
from modelplane.core.observed import condition_is
from modelplane.core.vocabulary import ConditionType
from modelplane.provisioning import kubernetes_version
from modelplane.scheduling.adapt.checks import object_name
from modelplane.scheduling.adapt.stack import read_gaps
from modelplane.scheduling.model import (
    Cluster,
    Pool,
    PoolHardware,
    QueueRoom,
    Taint,
    UnreadableCluster,
)
from modelplane.workloads import DEFAULT_KUBERNETES_VERSION


class Interner:
    """Shares one object per distinct device kind, pool hardware, pool list and
    scheduling block in a fleet.

    Clusters built from the same classes then hold the very same objects, so the
    scheduler's memo tables hit by identity instead of comparing contents. Each
    distinct published pool list, device and `spec.scheduling` block is read once:
    its model's JSON (one call into pydantic's serializer) is the key, so a fleet of
    thousands of clusters stamped from a few classes costs a lookup per cluster.
    """

    def __init__(self) -> None:
        self._published: dict[bytes, tuple[Pool, ...]] = {}
        self._read: dict[bytes, DeviceSpec] = {}
        self._devices: dict[DeviceSpec, DeviceSpec] = {}
        self._hardware: dict[PoolHardware, PoolHardware] = {}
        self._layouts: dict[tuple[Pool, ...], tuple[Pool, ...]] = {}
        self._scheduling: dict[tuple[bytes, str | None], SchedulingConfig] = {}

    def size(self) -> int:
        """Distinct published pool lists read so far."""
        return len(self._published)

    def pools(self, published: list[PublishedPool]) -> tuple[Pool, ...]:
        """The pools a cluster publishes; InvalidInputError naming every field that
        cannot be used."""
        key = _PUBLISHED.serializer.to_json(published, warnings=False)
        found = self._published.get(key)
        if found is None:
            problems: list[Issue] = []
            pools = tuple(
                self._pool(pool, f"status.gpuPools[{i}]", problems)
                for i, pool in enumerate(published)
            )
            if problems:
                raise InvalidInputError(problems)
            found = self._published[key] = self._layouts.setdefault(pools, pools)
        return found

    def scheduling(self, model: InferenceCluster) -> SchedulingConfig:
        """The cluster's `spec.scheduling` as `parse_scheduling`, the one reader of the
        block, reads it for the side that composes its replicas; each distinct block
        (keyed by its JSON and the cluster's Kubernetes version) is read once."""
        spec = model.spec
        block = spec.scheduling if spec is not None else None
        version = kubernetes_version(model)
        key = (
            b"" if block is None else block.__pydantic_serializer__.to_json(block, warnings=False),
            version,
        )
        found = self._scheduling.get(key)
        if found is None:
            # Its issues are reported where the cluster is composed (SchedulingConfigured).
            found = self._scheduling[key] = parse_scheduling(block, version)[0]
        return found

    def _pool(self, pool: PublishedPool, path: str, problems: list[Issue]) -> Pool:
        devices: list[DeviceSpec] = []
        for j, device in enumerate(pool.devices or ()):
            try:
                devices.append(self._device(device, f"{path}.devices[{j}]"))
            except InvalidInputError as invalid:
                problems.extend(invalid.issues)
        nodes = 0 if pool.nodes is None else pool.nodes
        if not pool.name:
            problems.append(Issue(f"{path}.name", "is required"))
        elif not is_dns_label(pool.name):
            # A replica pins its pods to the pool by a label: the name must be a label.
            problems.append(Issue(f"{path}.name", f"{pool.name!r} must be a DNS label"))
        if nodes < 0:
            problems.append(Issue(f"{path}.nodes", f"must be at least 0, not {nodes}"))
        hardware = PoolHardware(tuple(devices))
        return Pool(
            name=pool.name or "",
            class_name=pool.className or "",
            nodes=nodes,
            hardware=self._hardware.setdefault(hardware, hardware),
            node_taints=tuple(
                NodeTaint(t.key, str(t.effect), t.value or "") for t in pool.nodeTaints or ()
            ),
            nvlink_domain_nodes=pool.nvlinkDomainNodes or 0,
        )

    def _device(self, model: Device, path: str) -> DeviceSpec:
        key = model.__pydantic_serializer__.to_json(model, warnings=False)
        found = self._read.get(key)
        if found is None:
            spec = read_device(model, path)
            found = self._read[key] = self._devices.setdefault(spec, spec)
        return found


_PUBLISHED = TypeAdapter(list[PublishedPool])


def read_cluster(
    model: InferenceCluster, interner: Interner | None = None, *, reachable: bool = True
) -> Cluster:
    """An InferenceCluster as the scheduler sees it: labels, priorities, declared and
    published pools, taints. InvalidInputError naming every field it cannot use.
    `reachable` is its `Reachable` condition (the generated model carries no conditions:
    the glue reads it from the object)."""
    interner = interner or Interner()
    problems: list[Issue] = []
    metadata = model.metadata
    name = object_name(metadata.name if metadata else None, "metadata.name", problems)
    spec = model.spec
    scheduling = interner.scheduling(model)
    pools: tuple[Pool, ...] = ()
    try:
        pools = interner.pools((model.status.gpuPools if model.status else None) or [])
    except InvalidInputError as invalid:
        problems.extend(invalid.issues)
    if problems:
        raise InvalidInputError(problems)
    return Cluster(
        name=name,
        labels=dict(sorted(((metadata.labels if metadata else None) or {}).items())),
        pools=pools,
        default_priority=scheduling.default_priority,
        refused_default=None
        if scheduling.refused_default is None
        else scheduling.refused_default.message,
        allowed_priorities=scheduling.allowed_priorities,
        declared_pools=frozenset(p.name for p in spec.nodePools) if spec else frozenset(),
        stack=read_gaps(
            model.status.stack.missing if model.status and model.status.stack else None
        ),
        taints=tuple(
            Taint(taint.key, taint.effect, taint.value or "")
            for taint in (spec.taints if spec else None) or ()
        ),
        reachable=reachable,
        queues=_queues(model),
        over_quota=scheduling.over_quota_priorities,
        preemption=scheduling.preemption,
        backend=str(spec.backend.type)
        if spec and spec.backend and spec.backend.type
        else BackendType.NATIVE.value,
        # The XRD defaults it, so a cluster read before defaulting runs the default.
        kubernetes_version=kubernetes_version(model) or DEFAULT_KUBERNETES_VERSION,
        pod_security=enforced_level(spec.tenancy if spec else None),
    )


def _queues(model: InferenceCluster) -> dict[str, QueueRoom]:
    """`status.capacity.queues` by control-plane namespace; an entry without figures
    says nothing and is left out."""
    capacity = model.status.capacity if model.status else None
    found: dict[str, QueueRoom] = {}
    for queue in (capacity.queues if capacity else None) or ():
        if queue.gpu is None or not queue.name:
            continue
        provider = str(queue.provider) if queue.provider else ""
        room = QueueRoom(queue.name, provider, queue.gpu.quota, queue.gpu.used or 0)
        for namespace in queue.namespaces or ():
            found.setdefault(namespace, room)
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class Fleet:
    """Every InferenceCluster of the fleet: those the scheduler can read, and those it
    cannot (which exist, so replicas on them are held, never dropped)."""

    clusters: tuple[Cluster, ...]
    unreadable: tuple[UnreadableCluster, ...] = ()


class FleetMemo:
    """Clusters read in earlier calls, by the very model they were read from.

    A long-running function reads the same fetched objects into the same model
    instances call after call (`modelplane.xfn.required`), so a cluster read from
    one of them before is that cluster again: the adapter is a pure function of
    the model, and models are never changed once read. At most `entries`
    clusters are kept; past that, and when the shared interner has grown past as
    many distinct pool lists, everything is dropped and read again.
    """

    def __init__(self, entries: int = 25_000) -> None:
        self._entries = entries
        self._lock = threading.Lock()
        self._clusters = ByIdentity[InferenceCluster, Cluster](entries)
        self.interner = Interner()

    def read(self, model: InferenceCluster) -> Cluster:
        with self._lock:
            if self.interner.size() >= self._entries:
                # Clusters read with the old interner hold its pool lists: both go.
                self._clusters.clear()
                self.interner = Interner()
            interner = self.interner
        return self._clusters.get_or_make(model, lambda m: read_cluster(m, interner))


def read_fleet(
    models: Iterable[InferenceCluster],
    unreadable: Iterable[UnreadableCluster] = (),
    unreachable: Set[str] = frozenset(),
    memo: FleetMemo | None = None,
) -> Fleet:
    """Every cluster, sharing device objects between equal classes. A cluster the
    adapter refuses joins `unreadable` (the models' own refusals) with its problem.
    With a memo, a model read before is not read again. Clusters named in
    `unreachable` report `Reachable=False`.

    An unreadable cluster keeps its name only when that name is a valid one: a
    name that is itself garbage cannot say which cluster this was, so the
    cluster counts as nameless, and no replica's cluster is taken as gone.
    """
    interner = Interner()
    clusters: list[Cluster] = []
    refused = [_trusted(u.name, u.problem) for u in unreadable]
    for model in models:
        try:
            cluster = read_cluster(model, interner) if memo is None else memo.read(model)
            if cluster.name in unreachable:
                # Reachability is a condition, not part of the model the memo keys on.
                cluster = replace(cluster, reachable=False)
            clusters.append(cluster)
        except InvalidInputError as invalid:
            name = model.metadata.name if model.metadata else None
            refused.append(_trusted(name, "; ".join(map(str, invalid.issues))))
    return Fleet(tuple(clusters), tuple(refused))


def _trusted(name: str | None, problem: str) -> UnreadableCluster:
    problems: list[Issue] = []
    object_name(name, "metadata.name", problems)
    return UnreadableCluster(None if problems else name, problem)


def unreachable_clusters(objects: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """Names of the InferenceClusters whose `Reachable` condition is False, read from the
    fetched objects (the generated model carries no conditions). Unknown or absent is
    reachable: only a cluster known to be failing is evacuated."""
    found: set[str] = set()
    for obj in objects:
        metadata = obj.get("metadata")
        name = (
            cast(Mapping[str, Any], metadata).get("name") if isinstance(metadata, Mapping) else None
        )
        if isinstance(name, str) and condition_is(obj, ConditionType.REACHABLE, "False"):
            found.add(name)
    return frozenset(found)
