"""The object store, struct round-trips, and Crossplane's name-list formatting."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from modelplane.core.numbers import restore_ints
from modelplane.xfn.structs import to_dict, to_struct
from modelplane_cli.render.reconcile import first_n
from modelplane_cli.render.shapes import shape_error
from modelplane_cli.render.world import ObjectKey, World, fake_uid


def cm(name: str, namespace: str = "ns", **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def owned(name: str, owner: dict[str, Any], *, controller: bool = True) -> dict[str, Any]:
    obj = cm(name, owner["metadata"].get("namespace", "ns"))
    obj["metadata"]["ownerReferences"] = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"].get("uid", ""),
            "controller": controller,
        }
    ]
    return obj


def xroot(uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "example.org/v1",
        "kind": "XRoot",
        "metadata": {"name": "r", "namespace": "ns", "uid": uid},
    }


def _names(keys: list[ObjectKey]) -> list[tuple[str, str]]:
    return [(k.namespace, k.name) for k in keys]


def test_select_sorts_by_namespace_then_name_and_filters() -> None:
    world = World([cm("b", "y", tier="a"), cm("a", "y"), cm("c", "x", tier="a")])

    assert _names(world.select("v1", "ConfigMap")) == [("x", "c"), ("y", "a"), ("y", "b")]
    assert _names(world.select("v1", "ConfigMap", labels={"tier": "a"})) == [("x", "c"), ("y", "b")]
    assert _names(world.select("v1", "ConfigMap", namespace="y")) == [("y", "a"), ("y", "b")]
    assert world.select("v2", "ConfigMap") == []


def test_select_follows_objects_added_changed_and_deleted() -> None:
    world = World([cm("b"), cm("d")])
    assert _names(world.select("v1", "ConfigMap")) == [("ns", "b"), ("ns", "d")]

    world.put(cm("a"))
    world.put(cm("c", tier="a"))
    world.delete(ObjectKey("v1", "ConfigMap", "ns", "d"))
    relabelled = cm("b", tier="a")
    world.put(relabelled)

    assert _names(world.select("v1", "ConfigMap")) == [("ns", "a"), ("ns", "b"), ("ns", "c")]
    assert _names(world.select("v1", "ConfigMap", labels={"tier": "a"})) == [
        ("ns", "b"),
        ("ns", "c"),
    ]


def test_serialized_is_made_once_per_change_of_the_object() -> None:
    key = ObjectKey("v1", "ConfigMap", "ns", "a")
    world = World([cm("a")])

    first = world.serialized(key)
    assert world.serialized(key) is first
    assert not world.put(cm("a"))
    assert world.serialized(key) is first

    changed = cm("a")
    changed["data"] = {"replicas": 3}
    world.put(changed)
    assert to_dict(struct_pb2.Struct.FromString(world.serialized(key))) == changed

    world.delete(key)
    world.put(cm("a"))
    assert to_dict(struct_pb2.Struct.FromString(world.serialized(key))) == cm("a")


@pytest.mark.parametrize(
    ("obj", "error"),
    [
        ({"metadata": "x"}, "metadata: must be an object"),
        ({"metadata": {"name": 3}}, "metadata.name: must be a string"),
        ({"metadata": {"namespace": ["ns"]}}, "metadata.namespace: must be a string"),
        ({"metadata": {"labels": ["a"]}}, "metadata.labels: must be a map of strings"),
        ({"metadata": {"labels": {"a": 1}}}, "metadata.labels: must be a map of strings"),
        ({"metadata": {"annotations": "a"}}, "metadata.annotations: must be a map of strings"),
        ({"metadata": {"ownerReferences": "x"}}, "metadata.ownerReferences: must be a list"),
        ({"metadata": {"ownerReferences": ["x"]}}, "metadata.ownerReferences: must be a list"),
        ({"status": "Ready"}, "status: must be an object"),
        ({"status": {"conditions": [1]}}, "status.conditions: must be a list of objects"),
        ({"status": {"conditions": {"type": "Ready"}}}, "status.conditions: must be a list"),
    ],
)
def test_shapes_the_engine_cannot_read_are_named(obj: dict[str, Any], error: str) -> None:
    found = shape_error({"apiVersion": "v1", "kind": "ConfigMap", **obj})

    assert found is not None
    assert found.startswith(error)


def test_well_formed_objects_have_no_shape_error() -> None:
    obj = owned("a", xroot("u1"))
    obj["metadata"]["annotations"] = {"note": "x"}
    obj["status"] = {"conditions": [{"type": "Ready", "status": "True"}], "phase": 3}

    assert shape_error(obj) is None
    assert shape_error({"apiVersion": "v1", "kind": "ConfigMap"}) is None


def test_revision_moves_only_on_real_change() -> None:
    world = World([cm("a")])
    start = world.revision

    assert not world.put(cm("a"))
    assert world.revision == start
    changed = cm("a")
    changed["data"] = {"k": "v"}
    assert world.put(changed)
    assert world.revision == start + 1
    assert world.changed_since(start) == [ObjectKey("v1", "ConfigMap", "ns", "a")]


_OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["put", "change", "delete"]), st.sampled_from("abcde")),
    max_size=30,
)


@given(before=_OPERATIONS, after=_OPERATIONS)
def test_changed_since_is_every_object_still_present_that_changed_after(
    before: list[tuple[str, str]], after: list[tuple[str, str]]
) -> None:
    world = World()
    versions: dict[str, int] = {}

    def play(operations: list[tuple[str, str]]) -> set[str]:
        touched: set[str] = set()
        for operation, name in operations:
            key = ObjectKey("v1", "ConfigMap", "ns", name)
            if operation == "delete":
                world.delete(key)
                touched.discard(name)
                continue
            versions[name] = versions.get(name, 0) + (operation == "change")
            obj = cm(name)
            obj["data"] = {"v": str(versions[name])}
            if world.put(obj):
                touched.add(name)
        return touched

    play(before)
    start = world.revision
    touched = play(after)

    assert [k.name for k in world.changed_since(start)] == sorted(touched)


def test_referencing_is_every_object_naming_the_owner_by_kind_and_name() -> None:
    owner = xroot("u1")
    mine = owned("mine", owner)
    stale = owned("stale", xroot("old"))
    merely_owned = owned("merely", owner, controller=False)
    stranger = owned("stranger", {**owner, "metadata": {"name": "other", "namespace": "ns"}})
    world = World([owner, mine, stale, merely_owned, stranger])

    assert sorted(k.name for k in world.referencing("XRoot", "r")) == ["merely", "mine", "stale"]
    assert not world.referencing("XRoot", "nobody")
    world.delete(ObjectKey.of(mine))
    assert sorted(k.name for k in world.referencing("XRoot", "r")) == ["merely", "stale"]


def test_put_copies_so_callers_cannot_reach_into_the_store() -> None:
    obj = cm("a")
    world = World([obj])
    obj["metadata"]["name"] = "changed"

    assert world.get(ObjectKey("v1", "ConfigMap", "ns", "a")) is not None


def test_cascade_deletes_the_owned_tree_only() -> None:
    root = {
        "apiVersion": "example.org/v1",
        "kind": "XRoot",
        "metadata": {"name": "r", "namespace": "ns", "uid": "u1"},
    }
    child = owned("child", root)
    child["metadata"]["uid"] = "u2"
    grandchild = owned("grandchild", child)
    other = owned("other", {**root, "metadata": {"name": "elsewhere", "namespace": "ns"}})
    world = World([root, child, grandchild, other])

    deleted = world.delete_cascade(ObjectKey.of(root))

    assert sorted(k.name for k in deleted) == ["child", "grandchild", "r"]
    assert [k.name for k in world.all_keys()] == ["other"]


def test_controlled_by_respects_uid_and_controller_flag() -> None:
    owner = xroot("u1")
    mine = owned("mine", owner)
    stale = owned("stale", xroot("old"))
    merely_owned = owned("merely", owner, controller=False)
    world = World([owner, mine, stale, merely_owned])

    assert [k.name for k in world.controlled_by(owner)] == ["mine"]
    assert [k.name for k in world.dependents(owner)] == ["merely", "mine"]


def test_fake_uids_are_stable_and_distinct() -> None:
    a = ObjectKey("v1", "ConfigMap", "ns", "a")
    assert fake_uid(a) == fake_uid(ObjectKey("v1", "ConfigMap", "ns", "a"))
    assert fake_uid(a) != fake_uid(ObjectKey("v1", "ConfigMap", "ns", "b"))


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ([], ""),
        (["a"], "a"),
        (["b", "a"], "a, b"),
        (["c", "a", "b"], "a, b, and c"),
        (["d", "c", "b", "a", "e"], "a, b, c, and 2 more"),
    ],
)
def test_first_n_formats_like_crossplane(names: list[str], expected: str) -> None:
    assert first_n(names) == expected


_SAFE_INT = st.integers(min_value=-(2**53), max_value=2**53)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | _SAFE_INT
    | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=6), _JSON, max_size=5))
def test_struct_round_trip_restores_ints(value: dict[str, Any]) -> None:
    assert to_dict(to_struct(value)) == value
    assert to_dict(to_struct(value)) == restore_ints(value)


@given(_SAFE_INT)
def test_integral_floats_become_ints(n: int) -> None:
    restored = restore_ints({"n": float(n), "l": [float(n)]})
    assert restored == {"n": n, "l": [n]}
    assert type(restored["n"]) is int


def test_a_fetch_answers_from_the_world_now_after_changes_additions_and_deletions() -> None:
    import crossplane.function.proto.v1.run_function_pb2 as fnv1

    from modelplane_cli.render.requirements import fetch

    def names(answer: bytes) -> list[tuple[str, str]]:
        objects = [to_dict(item.resource) for item in fnv1.Resources.FromString(answer).items]
        return [(o["metadata"]["name"], o["data"]["v"]) for o in objects]

    world = World([{**cm("a"), "data": {"v": "1"}}, {**cm("b"), "data": {"v": "1"}}])
    everything = fnv1.ResourceSelector(api_version="v1", kind="ConfigMap")
    first = fetch(world, everything)
    assert names(first) == [("a", "1"), ("b", "1")]
    assert fetch(world, everything) is first  # nothing changed: the answer built before
    world.put({**cm("b"), "data": {"v": "2"}})
    assert names(fetch(world, everything)) == [("a", "1"), ("b", "2")]
    world.put({**cm("c"), "data": {"v": "1"}})
    world.delete(ObjectKey("v1", "ConfigMap", "ns", "a"))
    assert names(fetch(world, everything)) == [("b", "2"), ("c", "1")]
    # Another world with equal objects answers from its own objects.
    other = World([{**cm("a"), "data": {"v": "9"}}])
    assert names(fetch(other, everything)) == [("a", "9")]
    assert names(first) == [("a", "1"), ("b", "1")]


def test_a_labelled_select_follows_relabels_and_deletions() -> None:
    def labelled(name: str, **labels: str) -> dict[str, Any]:
        return {**cm(name), "metadata": {**cm(name)["metadata"], "labels": labels}}

    world = World([labelled("a", team="x", tier="1"), labelled("b", team="x"), cm("c")])
    assert [k.name for k in world.select("v1", "ConfigMap", labels={"team": "x"})] == ["a", "b"]
    assert [k.name for k in world.select("v1", "ConfigMap", labels={"team": "x", "tier": "1"})] == [
        "a"
    ]
    world.put(labelled("a", team="y"))
    assert [k.name for k in world.select("v1", "ConfigMap", labels={"team": "x"})] == ["b"]
    assert [k.name for k in world.select("v1", "ConfigMap", labels={"team": "y"})] == ["a"]
    world.delete(ObjectKey("v1", "ConfigMap", "ns", "b"))
    assert world.select("v1", "ConfigMap", labels={"team": "x"}) == []
    assert world.select("v1", "ConfigMap", namespace="other", labels={"team": "y"}) == []


def _containers(value: Any) -> list[int]:
    """The ids of every dict and list inside `value`, itself included."""
    if isinstance(value, dict):
        return [id(value), *(i for v in value.values() for i in _containers(v))]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if isinstance(value, list):
        return [id(value), *(i for v in value for i in _containers(v))]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return []


def test_put_keeps_the_stored_objects_own_values_and_copies_the_rest() -> None:
    key = ObjectKey("v1", "ConfigMap", "ns", "a")
    world = World([{**cm("a"), "data": {"x": "1"}}])
    stored = world.get(key)
    assert stored is not None
    equal_metadata = {**stored["metadata"]}
    new = {**stored, "data": {"x": "2"}}

    assert world.put(new)

    after = world.get(key)
    assert after is not None
    assert after["metadata"] is stored["metadata"]
    assert after["data"] is not new["data"]
    new["data"]["x"] = "3"
    assert after["data"] == {"x": "2"}
    # An equal value that is not the stored one's own is copied.
    assert world.put({**after, "metadata": equal_metadata, "data": {"x": "4"}})
    assert world.get(key)["metadata"] is not equal_metadata  # type: ignore[index]


_FRESH = st.dictionaries(
    st.sampled_from("xyz"), st.lists(st.integers(0, 3), max_size=2), max_size=2
)


@given(
    st.lists(
        st.tuples(
            st.sampled_from("abc"),  # the object written
            st.sampled_from("abc"),  # the object whose stored values it starts from
            st.sampled_from(["data", "spec", "status"]),  # the one field given fresh
            _FRESH,
        ),
        max_size=12,
    )
)
def test_stored_objects_share_nothing_with_each_other_or_with_what_callers_passed(
    writes: list[tuple[str, str, str, dict[str, list[int]]]],
) -> None:
    world = World([{**cm(name), "data": {}, "spec": {}, "status": {}} for name in "abc"])
    passed: list[dict[str, Any]] = []
    for name, source, fresh_field, fresh in writes:
        stored = world.get(ObjectKey("v1", "ConfigMap", "ns", source))
        assert stored is not None
        # The source's own values (another object's, when source is not name) and one fresh.
        new = {**stored, "metadata": {**stored["metadata"], "name": name}, fresh_field: fresh}
        world.put(new)
        passed.append(fresh)

    objects = [world.get(ObjectKey("v1", "ConfigMap", "ns", name)) for name in "abc"]
    ids = [i for obj in objects for i in _containers(obj)]
    assert len(ids) == len(set(ids))
    snapshot = [to_dict(to_struct(dict(obj))) for obj in objects if obj is not None]
    for fresh in passed:
        fresh.clear()
    assert [to_dict(to_struct(dict(obj))) for obj in objects if obj is not None] == snapshot
