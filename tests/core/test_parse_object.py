"""`parse_object` reads an object whose conditions all read in one validation: the
same model, or the same issues, as reading each condition first and leaving out
those that do not read (`with_readable_conditions`), which it did before."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from modelplane_models import InferenceClass, InferenceCluster, ModelReplica
from modelplane_models.object import Object
from pydantic import BaseModel, ValidationError

from modelplane.core.issues import InvalidInputError, from_validation_error, parse_object
from modelplane.core.numbers import restore_ints
from modelplane.core.observed import with_readable_conditions


def read_filtered_first(model: type[BaseModel], obj: dict[str, Any], ints_restored: bool) -> Any:
    """The reading before the one-validation path: conditions filtered, then the whole."""
    try:
        readable = with_readable_conditions(obj)
        return model.model_validate(readable if ints_restored else restore_ints(readable))
    except ValidationError as error:
        raise InvalidInputError(from_validation_error(error)) from error


def outcome(read: Any) -> tuple[str, Any]:
    try:
        model = read()
    except InvalidInputError as invalid:
        return "issues", invalid.issues
    return "model", (model.model_dump(), _fields_set(model))


def _fields_set(value: object) -> object:
    """Which fields were given, at every level: what `exclude_unset` dumps follow."""
    if isinstance(value, BaseModel):
        return (
            sorted(value.model_fields_set),
            {name: _fields_set(getattr(value, name)) for name in sorted(value.model_fields_set)},
        )
    if isinstance(value, list):
        return [_fields_set(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return None


TEXT = st.sampled_from(["Ready", "Synced", "True", "False", "", "x"])
CONDITION_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "type": TEXT,
    "status": TEXT,
    "reason": TEXT,
    "message": TEXT,
    "lastTransitionTime": st.just("2026-11-27T06:00:00Z"),
    # A Struct carries integers as doubles; a fractional one or a string does not read.
    "observedGeneration": st.sampled_from([1, 2.0, 2.5, "3"]),
}
WRONG = st.sampled_from([None, 7, 1.5, True, "text", [], {}])
CONDITION = st.one_of(
    st.fixed_dictionaries(
        {"type": TEXT, "status": TEXT},
        optional={k: v for k, v in CONDITION_VALUES.items() if k not in ("type", "status")},
    ),
    # A field missing or of the wrong type, or an entry that is no object.
    st.dictionaries(st.sampled_from(list(CONDITION_VALUES)), st.one_of(TEXT, WRONG), max_size=4),
    WRONG,
)
CONDITIONS = st.one_of(st.lists(CONDITION, max_size=4), WRONG)


def status(extra: dict[str, Any]) -> st.SearchStrategy[Any]:
    given_fields = {k: st.just(v) for k, v in extra.items()}
    with_conditions = st.fixed_dictionaries(given_fields, optional={"conditions": CONDITIONS})
    return st.one_of(with_conditions, WRONG)


CLASS = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceClass",
    "metadata": {"name": "h100"},
    "spec": {"devices": [{"name": "gpu", "claim": "Synthetic", "count": 8.0}]},
}
REPLICA = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelReplica",
    "metadata": {"name": "m-0", "namespace": "team"},
    "spec": {"deploymentName": "m", "clusterName": "a"},
}
CLUSTER = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "InferenceCluster",
    "metadata": {"name": "a"},
    "spec": {"nodePools": [{"name": "p", "className": "h100", "nodeCount": 2.0}]},
}
OBJECT = {
    "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
    "kind": "Object",
    "metadata": {"name": "o"},
    "spec": {"forProvider": {"manifest": {"kind": "Namespace"}}},
}
CASES: list[tuple[type[BaseModel], dict[str, Any], dict[str, Any]]] = [
    (InferenceClass, CLASS, {}),
    (ModelReplica, REPLICA, {"namespace": "team", "url": 7}),
    (InferenceCluster, CLUSTER, {"gpuPools": []}),
    (Object, OBJECT, {}),
]


@pytest.mark.parametrize(
    ("model", "base", "extra"), CASES, ids=lambda c: getattr(c, "__name__", "")
)
@settings(max_examples=150, deadline=None)
@given(data=st.data(), ints_restored=st.booleans())
def test_one_validation_reads_as_filtering_first(
    model: type[BaseModel],
    base: dict[str, Any],
    extra: dict[str, Any],
    data: st.DataObject,
    ints_restored: bool,
) -> None:
    # The status's other fields, valid or not, and sometimes no status at all.
    chosen = data.draw(
        st.fixed_dictionaries({}, optional={k: st.just(v) for k, v in extra.items()})
    )
    obj = {**base, "status": data.draw(status(chosen))}
    if data.draw(st.booleans()):
        del obj["status"]
    got = outcome(lambda: parse_object(model, obj, ints_restored=ints_restored))
    assert got == outcome(lambda: read_filtered_first(model, obj, ints_restored))


class _LooseStatus(BaseModel):
    conditions: list[dict[str, Any]] | None = None


class _Loose(BaseModel):
    """A model whose status takes any condition: reading it whole says nothing of them."""

    status: _LooseStatus | None = None


def test_a_model_reading_conditions_otherwise_still_leaves_out_what_does_not_read() -> None:
    obj = {"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": 7}]}}
    parsed = parse_object(_Loose, obj)
    assert parsed.status is not None
    assert parsed.status.conditions == [{"type": "Ready", "status": "True"}]
