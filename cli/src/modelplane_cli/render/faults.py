"""Faults: the failures a real control plane has, injected into a render (`--faults SEED`).

A preview without faults shows every apply accepted and every call answered. A
control plane is not like that, and the rules that keep a fleet serving (make
before break, hold what cannot be read) only matter when something fails. With
`--faults SEED` the first `FAULT_ROUNDS` rounds of a render inject, each at the
rate `RATES` gives, drawn from the seed and what is hit (never from the order of
a dict or the wall clock, so a seed gives the same faults on every machine):

- `ApplyRefused`: a provider's apply of a new or changed managed resource is
  refused (`Synced=False`, crossplane-runtime's "create failed" / "update failed"
  and the API server's words), and is retried the next round, as a provider
  requeues it.
- `ApplyTimeout`: the apply times out (`context deadline exceeded`); the object
  keeps what it reported before, `Synced=False`; retried the next round.
- `SyncFailing`: a provider's observe of a managed resource that did not change
  fails: `Synced=False`, Ready and what it reported back kept, for one round.
- `ClusterUnreachable`: every Object on one InferenceCluster (its own, and the
  replicas' it carries in `modelplane.ai/cluster`) stops syncing for 2 to 4
  rounds (cut short when the fault rounds end). The render clock does not move
  between rounds (`clock`), so the failure is dated: half the outages began 10
  minutes before the render's now (past the 5-minute grace of
  `modelplane.fleet.health`: `Reachable=False`, the cluster's replicas move), half
  2 minutes before (within it: `Reachable=Unknown`, they stay).
- `FunctionFailed`: a RunFunction call fails with gRPC `Unavailable`, as a function
  pod being restarted answers: the composite's reconcile fails and is retried.
- `RequiredMissing`: a resource a function requires by name is left out of a
  call's required resources, as a Get against a cache that has not caught up (or
  has just restarted) answers for a round. Requirements that list a kind are left
  whole: a member missing from a list is, to any reader, a deletion, which no
  function can tell from a lag (see `invariants` for what that leaves unproven).

When the fault rounds are over every fault clears: what a fault wrote is
reported again by its provider, and the render goes on, fault-free, until it
converges (`invariants` says what must hold meanwhile).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any, Final

import crossplane.function.proto.v1.run_function_pb2 as fnv1

from modelplane.core.vocabulary import INFERENCE_CLUSTER, LABEL_CLUSTER, LABEL_COMPOSITE
from modelplane.fleet.health import format_time, parse_time
from modelplane_cli.render.providers import CREATE_FAILED, UPDATE_FAILED
from modelplane_cli.render.runners import FunctionCallError, FunctionClient
from modelplane_cli.render.simulate import OBJECT_GROUPS
from modelplane_cli.render.world import Obj, ObjectKey, View, World, clone, group_of


class Fault(StrEnum):
    APPLY_REFUSED = "ApplyRefused"
    APPLY_TIMEOUT = "ApplyTimeout"
    SYNC_FAILING = "SyncFailing"
    CLUSTER_UNREACHABLE = "ClusterUnreachable"
    FUNCTION_FAILED = "FunctionFailed"
    REQUIRED_MISSING = "RequiredMissing"


# How many rounds inject faults; a fault-free tail follows until the world converges.
FAULT_ROUNDS: Final = 6
# The chance of each fault, per what it hits per fault round: a provider's apply,
# a managed resource observed, a cluster (an outage starts), a function call.
RATES: Final[Mapping[Fault, float]] = {
    Fault.APPLY_REFUSED: 0.10,
    Fault.APPLY_TIMEOUT: 0.05,
    Fault.SYNC_FAILING: 0.03,
    Fault.CLUSTER_UNREACHABLE: 0.10,
    Fault.FUNCTION_FAILED: 0.05,
    Fault.REQUIRED_MISSING: 0.05,
}
OUTAGE_ROUNDS: Final = (2, 4)
# When an outage began, before the render's now: past the 5-minute grace, or within it.
OUTAGE_AGES: Final = (timedelta(minutes=10), timedelta(minutes=2))

REASON_RECONCILE_ERROR = "ReconcileError"
REFUSED_MESSAGE = (
    "admission webhook denied the request: the API server is refusing writes (injected fault)"
)
TIMEOUT_MESSAGE = "context deadline exceeded (injected fault)"
OBSERVE_FAILED = "cannot get object: context deadline exceeded (injected fault)"
UNREACHABLE_MESSAGE = (
    "connect failed: cannot create new client: dial tcp: i/o timeout (injected fault)"
)
UNAVAILABLE = "Unavailable"
FUNCTION_MESSAGE = "connection refused: the function is restarting (injected fault)"


def draw(seed: int, *parts: object) -> float:
    """A number in [0, 1) fixed by the seed and `parts`, the same in every process."""
    text = "\x00".join(str(p) for p in (seed, *parts))
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True, order=True)
class Injected:
    """One fault injected: in which round, what, and what it hit."""

    round: int
    fault: Fault
    target: str

    def __str__(self) -> str:
        return f"round {self.round}: {self.fault} {self.target}"


class Faults:
    """What `--faults SEED` injects, round by round; the engine calls its hooks."""

    def __init__(
        self,
        seed: int,
        *,
        rounds: int = FAULT_ROUNDS,
        rates: Mapping[Fault, float] = RATES,
    ) -> None:
        self.seed = seed
        self.rounds = rounds
        self.rates = dict(rates)
        self.round = 0
        self.injected: list[Injected] = []
        self.now = ""
        # Cluster -> (last round of its outage, when it began).
        self._outages: dict[str, tuple[int, str]] = {}
        # Managed resources showing a fault: reported again by their provider once it clears.
        self._faulted: set[ObjectKey] = set()
        # Function calls made this round, to tell one call's draw from another's.
        self._calls = 0

    @property
    def active(self) -> bool:
        """Whether this round injects faults."""
        return 1 <= self.round <= self.rounds

    @property
    def settling(self) -> bool:
        """Whether the render may not stop yet: faults still to come, or to clear."""
        return self.round <= self.rounds or bool(self._faulted)

    def _hit(self, fault: Fault, *parts: object) -> bool:
        return self.active and draw(self.seed, fault, self.round, *parts) < self.rates[fault]

    def _note(self, fault: Fault, target: object) -> None:
        self.injected.append(Injected(self.round, fault, str(target)))

    def start_round(self, number: int, world: World) -> set[ObjectKey]:
        """Begin round `number`; return the managed resources that showed a fault last
        round: their provider reconciles them again (retries a failed apply, reports
        what it observes), and this round's faults, if any, follow."""
        self.round = number
        self._calls = 0
        self._outages = {c: o for c, o in self._outages.items() if o[0] >= number}
        if self.active:
            self._start_outages(world)
        faulted, self._faulted = self._faulted, set()
        return {key for key in faulted if key in world}

    def _start_outages(self, world: World) -> None:
        for key in world.all_keys():
            if key.kind != INFERENCE_CLUSTER or key.name in self._outages:
                continue
            if not self._hit(Fault.CLUSTER_UNREACHABLE, key.name):
                continue
            low, high = OUTAGE_ROUNDS
            length = low + int(draw(self.seed, "length", self.round, key.name) * (high - low + 1))
            older = draw(self.seed, "age", self.round, key.name) < 0.5
            age = OUTAGE_AGES[0] if older else OUTAGE_AGES[1]
            began = parse_time(self.now)
            since = format_time(began - age) if began is not None else self.now
            self._outages[key.name] = (self.round + length - 1, since)
            self._note(Fault.CLUSTER_UNREACHABLE, f"{key} for {length} rounds since {since}")

    def apply(self, world: World, key: ObjectKey, updating: bool) -> bool:
        """Before a provider applies `key` (`Providers.reconcile`): whether the apply
        fails instead (written as failed, and retried next round)."""
        obj = world.get(key)
        if obj is None:
            return False
        if self._hit(Fault.APPLY_REFUSED, key):
            verb = UPDATE_FAILED if updating else CREATE_FAILED
            world.put(_unsynced(obj, f"{verb}: {REFUSED_MESSAGE}", drop_reported=not updating))
            self._note(Fault.APPLY_REFUSED, key)
        elif self._hit(Fault.APPLY_TIMEOUT, key):
            verb = UPDATE_FAILED if updating else CREATE_FAILED
            world.put(_unsynced(obj, f"{verb}: {TIMEOUT_MESSAGE}", drop_reported=not updating))
            self._note(Fault.APPLY_TIMEOUT, key)
        else:
            return False
        self._faulted.add(key)
        return True

    def observe(self, world: World, managed: list[ObjectKey]) -> None:
        """After the providers' round: observes that fail (`SyncFailing`), and every
        Object on an unreachable cluster not syncing."""
        if not self.active:
            return
        for key in managed:
            obj = world.get(key)
            if obj is None:
                continue
            cluster = _cluster_of(obj)
            outage = self._outages.get(cluster) if cluster is not None else None
            if outage is not None:
                world.put(_unsynced(obj, UNREACHABLE_MESSAGE, since=outage[1]))
                self._faulted.add(key)
            elif self._hit(Fault.SYNC_FAILING, key):
                world.put(_unsynced(obj, OBSERVE_FAILED, since=self.now))
                self._faulted.add(key)
                self._note(Fault.SYNC_FAILING, key)

    def functions(self, client: FunctionClient) -> FunctionClient:
        return FaultyFunctions(self, client)

    def call(self, name: str, request: bytes, by_name: frozenset[str]) -> bytes:
        """Before a function call: raise FunctionCallError when it fails, else the request
        to send, with one resource of a requirement by name (`by_name`) left out when
        that fault hits."""
        self._calls += 1
        if self._hit(Fault.FUNCTION_FAILED, name, self._calls):
            self._note(Fault.FUNCTION_FAILED, f"call {self._calls} of {name}")
            raise FunctionCallError(UNAVAILABLE, FUNCTION_MESSAGE)
        if not by_name or not self._hit(Fault.REQUIRED_MISSING, name, self._calls):
            return request
        parsed = fnv1.RunFunctionRequest.FromString(request)
        found = [
            requirement
            for requirement in sorted(parsed.required_resources)
            if requirement in by_name and parsed.required_resources[requirement].items
        ]
        if not found:
            return request
        pick = int(draw(self.seed, "pick", self.round, name, self._calls) * len(found))
        items = parsed.required_resources[found[pick]].items
        gone = items[0].resource.fields["metadata"].struct_value.fields["name"].string_value
        del items[:]
        self._note(Fault.REQUIRED_MISSING, f"{gone} from {found[pick]} of {name}")
        return parsed.SerializeToString(deterministic=True)


def faults_note(seed: int, injected: list[Injected]) -> str:
    """One line saying what `--faults SEED` injected, by kind."""
    counts = {fault: sum(1 for i in injected if i.fault == fault) for fault in Fault}
    listed = ", ".join(f"{count} {fault}" for fault, count in counts.items() if count)
    return f"--faults {seed}: injected {listed or 'nothing'} in rounds 1-{FAULT_ROUNDS}"


class FaultyFunctions:
    """A function client whose calls fail, or miss a required resource, as `Faults` draws.

    A function asks for its required resources in its response and is called again
    with them; which of them it asked for by name is read from its last response."""

    def __init__(self, faults: Faults, client: FunctionClient) -> None:
        self._faults = faults
        self._client = client
        self._by_name: dict[str, frozenset[str]] = {}

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        sent = self._faults.call(name, request, self._by_name.get(name, frozenset()))
        response = await self._client.run(name, sent)
        asked = response.requirements.resources
        self._by_name[name] = frozenset(
            k for k, s in asked.items() if s.WhichOneof("match") == "match_name"
        )
        return response

    async def close(self) -> None:
        await self._client.close()


def _cluster_of(obj: View) -> str | None:
    """The InferenceCluster a provider-kubernetes Object reaches: its own, or a replica's."""
    if obj.get("kind") != "Object" or group_of(str(obj.get("apiVersion", ""))) not in (
        OBJECT_GROUPS
    ):
        return None
    labels: Mapping[str, Any] = (obj.get("metadata") or {}).get("labels") or {}
    cluster = labels.get(LABEL_CLUSTER)
    if isinstance(cluster, str):
        return cluster
    owner = labels.get(LABEL_COMPOSITE)
    return owner if isinstance(owner, str) else None


def _unsynced(obj: View, message: str, *, since: str = "", drop_reported: bool = False) -> Obj:
    """`obj` with Synced=False as crossplane-runtime writes a failed reconcile; what it
    reported back kept, unless nothing of it was ever applied."""
    out = clone(dict(obj))
    status: Obj = dict(out.get("status") or {})
    synced: Obj = {
        "type": "Synced",
        "status": "False",
        "reason": REASON_RECONCILE_ERROR,
        "message": message,
    }
    if since:
        synced["lastTransitionTime"] = since
    kept = [c for c in status.get("conditions") or [] if c.get("type") != "Synced"]
    if drop_reported:
        kept = [c for c in kept if c.get("type") != "Ready"]
        kept.append({"type": "Ready", "status": "False", "reason": "Creating"})
        status.pop("atProvider", None)
    status["conditions"] = [*kept, synced]
    out["status"] = status
    return out
