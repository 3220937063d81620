"""Reading what Kubernetes and the providers report back: the one home for it.

Every status condition is read through the generated `Condition` (Crossplane's
shape, `schemas/generate.py`), every provider read-back through the generated
provider-kubernetes `Object` model, and every observed workload through its kind's
generated model (`workload`); no other module digs `status.conditions`,
`status.atProvider` or a workload's status counts out of a dict.

Observed objects arrive from YAML a user may have edited and from clusters, so a
status can be of any shape. Reading is lenient where the answer is a decision
(`conditions`, `find_condition`, `condition_is`, `read_back`: an unreadable status
reads as "nothing reported"), and `conditions_problem` says what is wrong, for a
caller that must hold what it composed rather than act on "nothing reported" (the
hold rule for bad input).
"""

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, TypeAlias, TypeVar, cast

from modelplane_models.object import Object
from modelplane_models.shapes import Condition
from pydantic import ValidationError

from modelplane.core.numbers import integer, restore_ints


def _status(obj: Mapping[str, Any] | None) -> object:
    return (obj or {}).get("status")


def _entries(obj: Mapping[str, Any] | None) -> list[Any] | None:
    """The status's conditions list as written; None when it is not a list."""
    status = _status(obj)
    if not isinstance(status, Mapping):
        return None
    found = cast(Mapping[str, Any], status).get("conditions")
    if found is None:
        return []
    return cast(list[Any], found) if isinstance(found, list) else None


def _condition(entry: object) -> Condition | ValidationError:
    """The entry read into `Condition`, or why it does not read. An entry of plain
    scalars is read once per process (`_kept`): a fleet's objects carry the same few
    conditions call after call, and reading one cost most of reading a status."""
    key = _entry_key(entry)
    return _read(entry) if key is None else _kept(key)


def _read(entry: object) -> Condition | ValidationError:
    try:
        # A Struct carries observedGeneration as a float.
        return Condition.model_validate(restore_ints(entry))
    except ValidationError as error:
        return error


# The types of value an entry is kept by; a string needs no type beside it (see `_entry_key`).
_NUMBERS = frozenset({int, float, bool, type(None)})

_EntryKey: TypeAlias = tuple[object, ...]


def _entry_key(entry: object) -> _EntryKey | None:
    """What the entry reads from, exactly: its fields in order, each a name then its
    value, a value that is not a string preceded by its type, since True == 1 == 1.0
    in Python but a bool is no StrictInt and only a float is restored to an int. A
    key reads back one way only: names and strings are strings, types are not. None
    for an entry that is not a dict of string names and scalar values."""
    if type(entry) is not dict:
        return None
    key: list[object] = []
    for name, value in cast(dict[object, object], entry).items():
        if type(name) is not str:
            return None
        kind = type(value)
        if kind is str:
            key += (name, value)
        elif kind in _NUMBERS:
            key += (name, kind, value)
        else:
            return None
    return tuple(key)


@functools.lru_cache(maxsize=16_384)
def _kept(key: _EntryKey) -> Condition | ValidationError:
    """`_read` of the entry `key` was made from. A kept Condition is shared: nothing
    changes a condition it reads (they are read, compared and dropped); a
    ValidationError's `errors()` is a new list on every call."""
    entry: dict[object, object] = {}
    at = 0
    while at < len(key):
        if type(key[at + 1]) is type:
            entry[key[at]] = key[at + 2]
            at += 3
        else:
            entry[key[at]] = key[at + 1]
            at += 2
    return _read(entry)


def conditions(obj: Mapping[str, Any] | None) -> list[Condition]:
    """The object's status conditions, each read into `Condition`; an entry that does
    not read is skipped, as no condition of its type."""
    read = (_condition(entry) for entry in _entries(obj) or [])
    return [entry for entry in read if isinstance(entry, Condition)]


def with_readable_conditions(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """`obj` with only the conditions that read, for reading it into its model.

    Conditions are written by Crossplane and controllers, never by the user: one that
    does not read is no reason to refuse the object, only a status that says nothing
    (`conditions_problem` says what is wrong, for a caller that must hold).
    """
    status = obj.get("status")
    if not isinstance(status, Mapping) or "conditions" not in status:
        return obj
    readable = [entry for entry in _entries(obj) or [] if isinstance(_condition(entry), Condition)]
    return {**obj, "status": {**cast(Mapping[str, Any], status), "conditions": readable}}


def conditions_of_status(status: object) -> list[Condition]:
    """The conditions of a status, or of a status's part that holds conditions (a
    route's parent); none when they cannot be read."""
    return conditions({"status": status})


def first_condition(found: Sequence[Condition] | None, type_: str) -> Condition | None:
    """The first of a model's conditions of `type_`, or None."""
    return next((c for c in found or () if c.type == type_), None)


def find_condition(obj: Mapping[str, Any] | None, type_: str) -> Condition | None:
    """The object's first condition of `type_`, or None: `first_condition(conditions(obj),
    type_)`, without reading the entries that say another type (a Condition's type is
    a StrictStr, so such an entry reads as another type or not at all)."""
    for entry in _entries(obj) or ():
        said = _said_type(entry)
        if said is not None and said != type_:
            continue
        read = _condition(entry)
        if isinstance(read, Condition) and read.type == type_:
            return read
    return None


def _said_type(entry: object) -> str | None:
    """The type an entry says it is, when it is a dict with a string type."""
    if type(entry) is not dict:
        return None
    said = cast(dict[str, object], entry).get("type")
    return said if type(said) is str else None


def condition_is(obj: Mapping[str, Any] | None, type_: str, status: str) -> bool:
    """Whether the object reports condition `type_` with `status` ("True", "False", "Unknown")."""
    found = find_condition(obj, type_)
    return found is not None and found.status == status


def conditions_problem(obj: Mapping[str, Any] | None) -> str | None:
    """Why the object's status carries no readable conditions, or None.

    No status, or no conditions, is readable: nothing is reported yet. A status that
    is not an object, or conditions that are not a list of conditions each with a
    string type and status, cannot say anything.
    """
    status = _status(obj)
    if status is None:
        return None
    if not isinstance(status, Mapping):
        return "status is not an object"
    entries = _entries(obj)
    if entries is None:
        return "status.conditions is not a list of conditions"
    for index, entry in enumerate(entries):
        read = _condition(entry)
        if isinstance(read, ValidationError):
            first = read.errors()[0]
            where = f"status.conditions[{index}]" + "".join(f".{part}" for part in first["loc"])
            if first["type"] == "model_type":
                return f"{where} is not a condition"
            if first["type"] == "missing":
                return f"{where} is missing"
            if first["type"] == "int_type":
                return f"{where} is not an integer"
            return f"{where} is not a string"
    return None


class _WorkloadSpec(Protocol):
    @property
    def replicas(self) -> int | None: ...


class _WorkloadStatus(Protocol):
    @property
    def conditions(self) -> Sequence[Condition] | None: ...


class ObservedWorkload(Protocol):
    """A workload kind's generated model (`modelplane_models.deployment` and its
    siblings): the replicas asked for and the status its controller reports."""

    @classmethod
    def model_validate(cls, obj: Any) -> Self: ...

    @property
    def spec(self) -> _WorkloadSpec | None: ...

    @property
    def status(self) -> _WorkloadStatus | None: ...


W = TypeVar("W", bound=ObservedWorkload)


def workload(observed: Mapping[str, Any], model: type[W]) -> W | None:
    """A workload as read back from its cluster, read into its kind's model `model`.

    Only the spec's replica count and the status are read (the rest of the spec is
    what Modelplane rendered). A field that does not read is left out, never the
    whole object: a condition that does not read is dropped, as `conditions` skips
    it, and a count or generation that is no integer reads as absent (0), so one odd
    field never hides the serving condition beside it, as the kind's readiness query
    (`WorkloadKind.readiness`) reads only the condition and the counts it names.
    None only when even that cannot be read.
    """
    replicas = _integers(observed.get("spec")).get("replicas")
    status: dict[str, Any] = _integers(observed.get("status"))
    conditions = as_map(observed.get("status")).get("conditions")
    if conditions is not None:
        status["conditions"] = conditions
    read = {"spec": {} if replicas is None else {"replicas": replicas}, "status": status}
    try:
        return model.model_validate(restore_ints(with_readable_conditions(read)))
    except ValidationError:
        return None


def as_map(value: object) -> Mapping[str, Any]:
    """A read-back field as a mapping; anything else (absent, edited) as empty."""
    return cast(Mapping[str, Any], value) if isinstance(value, Mapping) else {}


def reported_count(value: object) -> int | None:
    """A read-back field that should be a count of things (a node group's size): a
    non-negative whole number (an integral double, as a Struct carries it, included);
    None for anything else (a string, a fraction, a boolean, an edited world's
    nonsense), which a reader takes as "nothing reported" rather than fail on."""
    found = integer(restore_ints(value))
    return found if found is not None and found >= 0 else None


def _integers(value: object) -> dict[str, Any]:
    """The integer fields of a mapping (integral doubles, as a Struct carries them,
    restored), the rest left out."""
    restored = restore_ints(dict(as_map(value)))
    return {k: v for k, v in restored.items() if integer(v) is not None}


def generations(observed: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """A read-back's `metadata.generation` and `status.observedGeneration` (integral
    doubles, as a Struct carries them, restored); None where absent or no integer."""
    generation = _integers(observed.get("metadata")).get("generation")
    seen = _integers(observed.get("status")).get("observedGeneration")
    return generation, seen


def read_back(observed: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What provider-kubernetes read back from the cluster for an observed Object
    (`status.atProvider.manifest`); None when it has not yet, or when its status
    cannot be read."""
    status = _status(observed)
    if not isinstance(status, Mapping):
        return None
    at_provider = cast(Mapping[str, Any], status).get("atProvider")
    if not isinstance(at_provider, Mapping):
        return None
    # Only the read-back is parsed: a malformed condition beside it does not hide it.
    try:
        parsed = Object.model_validate({"status": {"atProvider": at_provider}})
    except ValidationError:
        return None
    atp = parsed.status.atProvider if parsed.status else None
    return dict(atp.manifest) if atp is not None and atp.manifest else None


def wrapped_manifest(observed: Mapping[str, Any]) -> object:
    """The manifest an observed provider-kubernetes Object wraps
    (`spec.forProvider.manifest`: what was composed, not what the cluster holds), as
    written; None when it has none. Its reader decides what a manifest that is no
    object means."""
    return as_map(as_map(observed.get("spec")).get("forProvider")).get("manifest")


def at_provider(observed: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """What a cloud provider's managed resource reports it observed
    (`status.atProvider`), as written; empty until it has. Each cloud's fields are
    read by the cloud module that composes that resource (`modelplane.provisioning`)."""
    status = _status(observed)
    if not isinstance(status, Mapping):
        return {}
    found = cast(Mapping[str, Any], status).get("atProvider")
    return cast(Mapping[str, Any], found) if isinstance(found, Mapping) else {}


class ObservedStatus(Protocol):
    """A generated model of an object read back for its status alone (a Gateway)."""

    @classmethod
    def model_validate(cls, obj: Any) -> Self: ...


S = TypeVar("S", bound=ObservedStatus)


def status_only(observed: Mapping[str, Any], model: type[S]) -> S | None:
    """An object read back from its cluster with only its status read into `model`;
    None when the status cannot be read. A condition that does not read is dropped,
    as `conditions` skips it."""
    status = observed.get("status")
    try:
        return model.model_validate(
            restore_ints(
                with_readable_conditions({"status": status if isinstance(status, Mapping) else {}})
            )
        )
    except ValidationError:
        return None
