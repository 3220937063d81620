"""A timeline step prices a select's answer from its two latest objects, kept ranked
between steps: the times it gives are those of looking at every object it read.

The reference below is the timeline's pricing as it was before the ranking: every
object read, from the reconcile's own reads and every query's answer, priced one
by one. Steps in a row, with writes between them (moving the ranks of the types
they write) and objects deleted, must leave both timelines the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from modelplane_cli.render import intervals
from modelplane_cli.render.reads import Reads
from modelplane_cli.render.timeline import Timeline, read_keys
from modelplane_cli.render.world import ObjectKey, World, controller_reference, reference_matches

_XR = ObjectKey("example.org/v1", "XApp", "", "app")
_TYPES = (("v1", "ConfigMap"), ("example.org/v1", "XApp"))
_NAMES = [f"o{i}" for i in range(8)]


def _key(type_index: int, name: str) -> ObjectKey:
    api_version, kind = _TYPES[type_index]
    return ObjectKey(api_version, kind, "", name)


def _obj(key: ObjectKey, controlled: bool, owned: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": key.name, "labels": {"tier": key.name[-1:]}}
    refs: list[dict[str, Any]] = []
    if owned:  # an owner reference to the composite, a controller one or not
        refs.append({"apiVersion": _XR.api_version, "kind": _XR.kind, "name": _XR.name})
        if controlled:
            refs[0]["controller"] = True
    if refs:
        meta["ownerReferences"] = refs
    return {"apiVersion": key.api_version, "kind": key.kind, "metadata": meta}


@dataclass
class _Reference:
    """The timeline's composite pricing as it was: every object read, one by one."""

    changed: dict[ObjectKey, float] = field(default_factory=dict[ObjectKey, float])
    given: dict[ObjectKey, float] = field(default_factory=dict[ObjectKey, float])
    seconds: float = 0.0

    def step(
        self,
        world: World,
        key: ObjectKey,
        written: list[ObjectKey],
        reads: Reads,
        ttl: float | None,
    ) -> None:
        keys: set[ObjectKey] = set(reads.objects)
        for _, _, answer in reads.queries:
            keys.update(answer)
        xr = world.get(key)
        requeue = intervals.composite_requeue(ttl)
        seen: dict[ObjectKey, float] = {}
        for read in keys:
            obj = world.get(read)
            controller = controller_reference(obj) if obj is not None else None
            composed = (
                controller is not None and xr is not None and reference_matches(controller, xr)
            )
            wakes = read == key or composed
            at = self.given.get(read) if read == key else self.changed.get(read)
            if at is not None:
                seen[read] = at if wakes else at + requeue
        latest: ObjectKey | None = None
        everything = runner_up = 0.0
        for read, at in seen.items():
            if latest is None or at > everything:
                latest, everything, runner_up = read, at, everything
            elif at > runner_up:
                runner_up = at
        for one in written:
            at = runner_up if one == latest and one != key else everything
            self.changed[one] = at
            if one != key:
                self.given[one] = at
        self.seconds = max(self.seconds, everything)

    def provider(self, key: ObjectKey, delay: float) -> None:
        self.changed[key] = self.changed.get(key, 0.0) + delay
        self.seconds = max(self.seconds, self.changed[key])


_STEP = st.fixed_dictionaries(
    {
        # Objects read one by one, and selects (of a type, all or one label value).
        "gets": st.lists(st.tuples(st.integers(0, 1), st.sampled_from(_NAMES)), max_size=3),
        "selects": st.lists(
            st.tuples(st.integers(0, 1), st.one_of(st.none(), st.sampled_from("0123"))),
            max_size=3,
        ),
        "writes": st.lists(st.tuples(st.integers(0, 1), st.sampled_from(_NAMES)), max_size=3),
        "deletes": st.lists(st.tuples(st.integers(0, 1), st.sampled_from(_NAMES)), max_size=1),
        "provider": st.one_of(st.none(), st.tuples(st.integers(0, 1), st.sampled_from(_NAMES))),
        "delay": st.sampled_from([0.0, 10.0, 60.0]),
        "ttl": st.sampled_from([None, 5.0, 30.0, 600.0]),
        # Whether the written objects are the composite's (controlled), owned, or neither.
        "ownership": st.sampled_from(["controlled", "owned", "none"]),
    }
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.sampled_from(_NAMES), st.booleans()), max_size=10),
    st.lists(_STEP, min_size=1, max_size=8),
)
def test_ranked_selects_price_every_step_as_reading_every_object(
    initial: list[tuple[int, str, bool]], steps: list[dict[str, Any]]
) -> None:
    world = World([_obj(_XR, False, False)])
    for type_index, name, controlled in initial:
        key = _key(type_index, name)
        if key != _XR:
            world.put(_obj(key, controlled, controlled))
    timeline = Timeline(watches=False)
    reference = _Reference()

    for step in steps:
        provider = step["provider"]
        if provider is not None and _key(*provider) in world:
            key = _key(*provider)
            timeline.changed[key] = timeline.changed.get(key, 0.0)
            timeline._stamp([key], timeline.changed[key] + step["delay"])  # pyright: ignore[reportPrivateUsage]
            reference.provider(key, step["delay"])
        for type_index, name in step["deletes"]:
            if _key(type_index, name) != _XR:
                world.delete(_key(type_index, name))
        reads = Reads()
        for type_index, name in step["gets"]:
            key = _key(type_index, name)
            reads.objects[key] = world.changed_at(key)
        for type_index, label in step["selects"]:
            api_version, kind = _TYPES[type_index]
            labels = {"tier": label} if label is not None else None
            answer = world.select(api_version, kind, labels=labels)
            pairs = tuple(sorted(labels.items())) if labels else None
            reads.queries.append((("select", api_version, kind, None, pairs), None, answer))
        start = world.revision
        controlled = step["ownership"] == "controlled"
        owned = step["ownership"] != "none"
        for type_index, name in step["writes"]:
            key = _key(type_index, name)
            if key == _XR:
                world.put({**_obj(_XR, False, False), "status": {"at": world.revision}})
            else:
                world.put({**_obj(key, controlled, owned), "data": {"at": str(world.revision)}})
        written = world.changed_since(start)
        if not written:
            continue

        reference.step(world, _XR, written, reads, step["ttl"])
        timeline.composite_step(world, _XR, written, read_keys(world, _XR, reads), step["ttl"], {})

        assert timeline.changed == reference.changed
        assert timeline.given == reference.given
        assert timeline.seconds == reference.seconds
