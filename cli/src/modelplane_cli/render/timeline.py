"""Wall-clock time on a control plane: when each change of a render would happen.

A render runs in rounds; a control plane runs on events and timers. This prices
each step of a render with the intervals a Crossplane v2.3 control plane waits
(`intervals`), as the earliest moment the step could have happened:

- a **provider** step on a managed resource happens when the resource last
  changed, plus nothing when it answers an apply (a create is observed again at
  once), or plus the provider's poll interval when what it reports is progress
  seen on a later observation (a workload that became available, a rollout that
  finished, the state after an update), or nothing when the Object is watched
  (`--watches`: provider-kubernetes `--enable-watches` and `spec.watch: true`);
- a **composite** step that changed the world happens once the composite could
  have seen everything it read as it was: a change to itself or to a resource it
  composed wakes it at once (realtime compositions), a change to anything else it
  read (a required resource) only on its next requeue, after its pipeline's TTL.
  Its own status takes that time; each composed resource it wrote takes the time
  of everything it read but that resource, whose own observed state is taken not
  to decide what the composite desires of it (a rounds engine sees a composite's
  new spec and its Object's new status in one step where a control plane sees
  them minutes apart).

Objects given as input, and any not changed during the render, are there at time
zero. The time of a render is when its last change happens. What a control plane
spends beyond these intervals (pulling images, starting pods, a Helm install) is
not counted, so a duration is a floor on the control plane's own waiting.

A deleted object's time is not kept: a composite that reacts to a deletion
alone is priced by the rest of what it read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane_cli.render import intervals
from modelplane_cli.render.reads import Reads
from modelplane_cli.render.reconcile import RESPONSIVE
from modelplane_cli.render.world import (
    ObjectKey,
    Selection,
    View,
    World,
    controller_reference,
    reference_matches,
)


@dataclass(frozen=True)
class Entry:
    """One composite reaching one state: a condition's new status and reason."""

    seconds: float
    key: ObjectKey
    condition: str
    status: str
    reason: str


@dataclass
class Timeline:
    """The priced steps of one render, with watches on or off."""

    watches: bool
    # When each object last changed, in seconds from the start of the render.
    changed: dict[ObjectKey, float] = field(default_factory=dict[ObjectKey, float])
    # When each composite was last changed by someone else (its parent): what it
    # reads of itself, as its own status is not an input to its own reconcile.
    given: dict[ObjectKey, float] = field(default_factory=dict[ObjectKey, float])
    entries: list[Entry] = field(default_factory=list[Entry])
    # The time of the latest change so far, and the latest by round.
    seconds: float = 0.0
    rounds: list[float] = field(default_factory=list[float])
    # How often a time of an object of each type was written, and each select's
    # answer ranked by time with that count (`_ranked`).
    _type_stamps: dict[tuple[str, str], int] = field(
        default_factory=dict[tuple[str, str], int], repr=False, compare=False
    )
    _ranks: dict[Selection, tuple[int, tuple[ObjectKey, ...], list[tuple[float, ObjectKey]]]] = (
        field(
            default_factory=dict[
                Selection, tuple[int, tuple[ObjectKey, ...], list[tuple[float, ObjectKey]]]
            ],
            repr=False,
            compare=False,
        )
    )

    def provider_step(self, world: World, key: ObjectKey, observed: bool) -> None:
        """Price a provider's reconcile of `key`, which changed it (only it)."""
        obj = world.get(key)
        if obj is None:
            return
        delay = intervals.provider_observes(obj, watches=self.watches) if observed else 0.0
        self._stamp([key], self.changed.get(key, 0.0) + delay)

    def composite_step(
        self,
        world: World,
        key: ObjectKey,
        changed: list[ObjectKey],
        reads: ReadKeys,
        ttl: float | None,
        conditions_before: Mapping[str, tuple[str, str]],
    ) -> None:
        """Price a composite's reconcile, which wrote `changed` (not empty) after
        reading `reads` (`read_keys`)."""
        requeue = intervals.composite_requeue(ttl)
        seen: dict[ObjectKey, float] = {}
        for read, wakes in reads.singles:
            at = self.given.get(read) if read == key else self.changed.get(read)
            if at is not None:
                seen[read] = at if wakes else at + requeue
        # A select's objects (a ModelDeployment's whole fleet) wake nothing (those
        # that would are among the singles), so each is at its change plus the
        # requeue: only the latest two of each answer can be the latest two of all.
        for selection, answer in reads.selects:
            taken = 0
            for at, read in self._ranked(selection, answer):
                if read in seen or read in reads.single_keys:
                    continue
                seen[read] = at + requeue
                taken += 1
                if taken == 2:
                    break
        # The latest of what it read, and the latest but that one's: a composed
        # resource's time is the latest of everything read but itself.
        latest: ObjectKey | None = None
        everything = runner_up = 0.0
        for read, at in seen.items():
            if latest is None or at > everything:
                latest, everything, runner_up = read, at, everything
            elif at > runner_up:
                runner_up = at
        moment = everything
        for written in changed:
            # What a composite desires of a composed resource is taken not to depend
            # on that resource's own observed state: a rewrite of an Object's spec
            # waits on its composite's inputs, not on the Object's status.
            at = runner_up if written == latest and written != key else everything
            self._set(written, at)
            if written != key:
                self.given[written] = at
        self.seconds = max(self.seconds, everything)
        after = conditions_of(world.get(key))
        for kind in sorted(after):
            # Always True in a render (`reconcile`): its appearance is no step of the story.
            if kind == RESPONSIVE:
                continue
            if conditions_before.get(kind) != after[kind]:
                status, reason = after[kind]
                self.entries.append(Entry(moment, key, kind, status, reason))

    def _ranked(
        self, selection: Selection, answer: tuple[ObjectKey, ...]
    ) -> list[tuple[float, ObjectKey]]:
        """A select's answer, latest change first (objects never changed left out),
        kept until the answer or the time of one object of its type changes."""
        stamp = self._type_stamps.get((selection[0], selection[1]), 0)
        kept = self._ranks.get(selection)
        if kept is not None and kept[0] == stamp and kept[1] == answer:
            return kept[2]
        changed = self.changed
        ranked = sorted(((changed[read], read) for read in answer if read in changed), reverse=True)
        self._ranks[selection] = (stamp, answer, ranked)
        return ranked

    def end_round(self) -> None:
        self.rounds.append(self.seconds)

    def _stamp(self, changed: list[ObjectKey], moment: float) -> None:
        for key in changed:
            self._set(key, moment)
        self.seconds = max(self.seconds, moment)

    def _set(self, key: ObjectKey, moment: float) -> None:
        """The one place a time is written: it moves its type's stamp (`_ranked`)."""
        self.changed[key] = moment
        kind = (key.api_version, key.kind)
        self._type_stamps[kind] = self._type_stamps.get(kind, 0) + 1


def conditions_of(obj: View | None) -> dict[str, tuple[str, str]]:
    """Each condition type's (status, reason)."""
    out: dict[str, tuple[str, str]] = {}
    for condition in ((obj or {}).get("status") or {}).get("conditions") or []:
        if isinstance(condition, Mapping) and condition.get("type"):
            out[str(condition["type"])] = (  # pyright: ignore[reportUnknownArgumentType]
                str(condition.get("status", "")),  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
                str(condition.get("reason", "")),  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
            )
    return out


@dataclass(frozen=True)
class ReadKeys:
    """What a reconcile read, for pricing: `singles` each with whether a change to it
    wakes the composite at once (the composite itself, or a resource it composed),
    and `selects`, each select's answer, none of which wakes it but those also
    among the singles."""

    singles: list[tuple[ObjectKey, bool]] = field(default_factory=list[tuple[ObjectKey, bool]])
    selects: list[tuple[Selection, tuple[ObjectKey, ...]]] = field(
        default_factory=list[tuple[Selection, tuple[ObjectKey, ...]]]
    )
    single_keys: frozenset[ObjectKey] = frozenset()


def read_keys(world: World, key: ObjectKey, reads: Reads | None) -> ReadKeys:
    """Every object a reconcile of `key` read, worked out once per step for both
    timelines. A select's answer stays whole (a ModelDeployment's reads the fleet):
    only the objects in it that could wake the composite, the few with an owner
    reference of its kind and name, are taken out among the singles."""
    if reads is None:
        return ReadKeys()
    xr = world.get(key)
    composes = _Controller(world, xr) if xr is not None else None
    wakers = {key, *composes.candidates} if composes is not None else {key}
    keys: set[ObjectKey] = set(reads.objects)
    selects: list[tuple[Selection, tuple[ObjectKey, ...]]] = []
    for query, _, answer in reads.queries:
        if query[0] == "select":
            selection: Selection = (query[1], query[2], query[3], query[4])
            selects.append((selection, tuple(answer)))
            keys.update(wakers.intersection(answer))
        else:
            keys.update(answer)
    singles = [(read, read == key or (composes is not None and composes.of(read))) for read in keys]
    return ReadKeys(singles, selects, frozenset(keys))


class _Controller:
    """Whether an object's controller reference names one composite. Only objects
    with some owner reference of the composite's kind and name can (the world's
    index of them), so the others a reconcile read (a ModelDeployment reads the
    whole fleet) are not looked at."""

    def __init__(self, world: World, xr: View) -> None:
        self._world = world
        self._xr = xr
        key = ObjectKey.of(xr)
        self.candidates = world.referencing(key.kind, key.name)

    def of(self, key: ObjectKey) -> bool:
        if key not in self.candidates:
            return False
        obj = self._world.get(key)
        controller: Mapping[str, Any] | None = (
            controller_reference(obj) if obj is not None else None
        )
        return controller is not None and reference_matches(controller, self._xr)


def duration(seconds: float) -> str:
    """A duration as a person says it: "about 12 minutes"."""
    if seconds < 1:
        return "under a second"
    if seconds < 90:
        whole = round(seconds)
        return f"about {whole} second{'s' if whole != 1 else ''}"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"about {minutes} minutes"
    hours, rest = divmod(minutes, 60)
    tail = f" {rest} minute{'s' if rest != 1 else ''}" if rest else ""
    return f"about {hours} hour{'s' if hours != 1 else ''}{tail}"


def clock(seconds: float) -> str:
    """A moment of the timeline: +MMmSSs (hours when there are any)."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"+{hours}h{minutes:02d}m{secs:02d}s"
    return f"+{minutes:02d}m{secs:02d}s"


def priced(defaults: Timeline, watched: Timeline, *, watches: bool) -> str:
    """The render's time on a control plane, the chosen intervals first."""
    default_text = "with default intervals"
    watched_text = "with watches on"
    first, second = (watched, defaults) if watches else (defaults, watched)
    first_text, second_text = (
        (watched_text, default_text) if watches else (default_text, watched_text)
    )
    return (
        f"{duration(first.seconds)} on a control plane {first_text}, "
        f"{duration(second.seconds)} {second_text}"
    )


def listing(
    timeline: Timeline, table: Callable[[Sequence[str], Sequence[Sequence[str]]], str]
) -> str:
    """`--timeline`: when each composite reaches each state."""
    title = "TIMELINE (watches on)" if timeline.watches else "TIMELINE (default intervals)"
    if not timeline.entries:
        return f"{title}\nNo composite changed state."
    rows = [
        [clock(e.seconds), str(e.key), e.condition, e.status, e.reason]
        for e in sorted(timeline.entries, key=lambda e: e.seconds)
    ]
    return f"{title}\n" + table(["TIME", "COMPOSITE", "CONDITION", "STATUS", "REASON"], rows)
