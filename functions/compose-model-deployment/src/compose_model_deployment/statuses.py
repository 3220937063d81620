"""This deployment's observed composed resources' statuses, as a call reads them, and
the conditions made from them (ReplicasAccepted, ReplicasReady).

What a status says (whether it can be read, whether the replica serves, whether its
cluster refused it) is a function of the observed object alone, so it is read once
per distinct object and kept by the runner (`Kept.statuses`, keyed by
`content_key`), and once per call for each name: a deciding call asks whether the
same replica serves twice (running, emitted).
"""

import marshal
from dataclasses import dataclass
from typing import Any

from compose_model_deployment.endpoints import endpoint_key
from modelplane.core.applied import served_as_last_read
from modelplane.core.bounded import BoundedMemo
from modelplane.core.kinds.base import mapping
from modelplane.core.observed import conditions_problem, find_condition
from modelplane.core.vocabulary import ANNOTATION_REVISION, ConditionType, Reason
from modelplane.xfn import report
from modelplane.xfn.memo import digest_bytes


def content_key(obj: Any) -> bytes:
    """A key for plain data (dicts, lists, strings, numbers, booleans, None): a digest
    of its marshalled bytes. Equal bytes decode to equal data with the same types and
    key order; equal data may marshal differently (shared strings are written as
    references), which only costs a miss."""
    return digest_bytes(marshal.dumps(obj))


def refusal(observed: dict[str, Any] | None) -> str | None:
    """Why an observed ModelReplica's cluster did not accept it, or None."""
    accepted = find_condition(observed, ConditionType.ACCEPTED)
    if accepted is None or accepted.status != "False":
        return None
    return f"{accepted.reason or ''}: {accepted.message or ''}"


def serving(observed: dict[str, Any] | None) -> bool:
    """Whether an observed ModelReplica reports its model serving the revision it
    carries now, as last read (`served_as_last_read`: on an unreachable cluster, what
    it served before; `fn.emit` does not count that one as available). Right after
    this function updates a replica in place, the replica's status still holds the
    verdict compose-model-replica made for the old revision (Crossplane sets a
    function's conditions with no observedGeneration), so only the revision it names
    in `status.servingRevision` ties the verdict to the spec."""
    obj = observed or {}
    annotations = mapping(mapping(obj.get("metadata")).get("annotations"))
    judged = mapping(obj.get("status")).get("servingRevision")
    return served_as_last_read(
        find_condition(observed, ConditionType.SERVING),
        judged,
        annotations.get(ANNOTATION_REVISION),
    )


@dataclass(frozen=True)
class StatusFacts:
    """What one observed object's status says."""

    problem: str | None
    """Why its conditions cannot be read (`conditions_problem`), or None."""
    serving: bool
    refusal: str | None


def read_status(observed: dict[str, Any] | None) -> StatusFacts:
    return StatusFacts(conditions_problem(observed), serving(observed), refusal(observed))


class Statuses:
    """The observed composed resources of one call, each status read at most once."""

    def __init__(
        self, observed: dict[str, dict[str, Any]], kept: BoundedMemo[bytes, StatusFacts]
    ) -> None:
        self.observed = observed
        self._kept = kept
        self._keys: dict[str, bytes] = {}
        self._facts: dict[str, StatusFacts] = {}

    def key(self, name: str) -> bytes:
        """`content_key` of the observed object `name`, worked out once per call."""
        found = self._keys.get(name)
        if found is None:
            found = self._keys[name] = content_key(self.observed[name])
        return found

    def facts(self, name: str) -> StatusFacts:
        found = self._facts.get(name)
        if found is None:
            obj = self.observed.get(name)
            if obj is None:
                found = read_status(None)
            else:
                found = self._kept.get_or_make(self.key(name), lambda: read_status(obj))
            self._facts[name] = found
        return found

    def problem(self, name: str) -> str | None:
        """Why the composed resource `name`'s status cannot be read, or None."""
        return self.facts(name).problem

    def refusal(self, name: str) -> str | None:
        """Why the cluster of the composed ModelReplica `name` did not accept it, or None."""
        return self.facts(name).refusal

    def serves(self, name: str) -> bool:
        """Whether the composed ModelReplica `name` serves, as far as can be known.

        A status that cannot be read says nothing new, so what was composed from the
        last one stands (the hold rule for bad input): the replica serves while the
        ModelEndpoint composed only for a serving replica is still there. Reading it
        as not serving would drop that endpoint, and the route to a replica that may
        serve.
        """
        facts = self.facts(name)
        if facts.problem is not None:
            return endpoint_key(name) in self.observed
        return facts.serving


def unreadable_statuses(statuses: Statuses, serving_now: dict[str, bool]) -> list[str]:
    """A Warning's message for each placed replica whose status cannot be read."""
    messages: list[str] = []
    for name, serves_now in sorted(serving_now.items()):
        problem = statuses.problem(name)
        if problem is not None:
            held = "its ModelEndpoint is held" if serves_now else "it is read as not serving"
            messages.append(f"ModelReplica {name}: {problem}; {held} until it can be read")
    return messages


def accepted_condition(refusals: dict[str, str | None]) -> report.Condition:
    """Whether every replica's cluster accepted it. A replica refused at render time
    (a broken platform template, a disallowed priority) keeps running what it ran,
    so without this the deployment would look healthy while it can no longer change."""
    refused = [f"{name}: {why}" for name, why in sorted(refusals.items()) if why]
    if refused:
        return report.Condition(
            ConditionType.REPLICAS_ACCEPTED, False, Reason.REPLICAS_NOT_ACCEPTED, "; ".join(refused)
        )
    return report.Condition(
        ConditionType.REPLICAS_ACCEPTED,
        True,
        Reason.ALL_ACCEPTED,
        "no replica was refused by its cluster",
    )


def ready_condition(ready: int, placed: int, wanted: int) -> report.Condition:
    """ReplicasReady: every placed replica serves, and at least as many as wanted are
    placed. A rollout's surge places more than wanted: then the message counts against
    what is placed, since "3 of 2 serving" would read as ready while one is not."""
    if placed > wanted:
        message = f"{ready} of {placed} placed replicas serving ({wanted} desired)"
    else:
        message = f"{ready} of {wanted} replicas serving"
    if ready == placed and placed >= wanted:
        return report.Condition(ConditionType.REPLICAS_READY, True, Reason.ALL_READY, message)
    return report.Condition(ConditionType.REPLICAS_READY, False, Reason.REPLICAS_NOT_READY, message)
