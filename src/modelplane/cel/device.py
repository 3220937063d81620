"""The DRA `device` variable: a hashable Device and the value CEL sees for it.

Kubernetes builds `device` from a ResourceSlice device (dynamic-resource-allocation
cel/compile.go): a bare attribute or capacity name takes the driver as its
domain, a qualified "domain/name" splits at the first "/", an unknown domain
reads as an empty map and an unknown name inside a domain is an error.

List-typed attributes (`ints`, `bools`, `strings`, `versions`; KEP-5491) exist
from Kubernetes 1.36: a device built for an older cluster, or for a caller that
names no version, refuses them, as such a cluster's API server drops them.

Capacities are kept the way the kube-scheduler receives them: the API server
stores a quantity in its String() form, so "1.5Gi" reaches the scheduler as
"1536Mi". Parsing the spec and then the canonical string gives the same
representation (and so the same isInteger and asApproximateFloat) upstream sees.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from modelplane.cel.keyed import Keyed
from modelplane.cel.quantity import Quantity, QuantityError
from modelplane.cel.semver import Semver
from modelplane.cel.values import INT64_MAX, INT64_MIN, DomainMap
from modelplane.cel.versions import list_attributes_enabled

Scalar = str | int | bool | Semver
AttributeValue = Scalar | tuple[Scalar, ...]

_ATTRIBUTE_KINDS: Final = ("string", "int", "bool", "version")
_LIST_KINDS: Final = {"strings": "string", "ints": "int", "bools": "bool", "versions": "version"}
# ResourceSliceMaxAttributeValuesPerDevice bounds all of a device's values, so no
# single list can be longer.
MAX_LIST_VALUES: Final = 48
_V = TypeVar("_V")


@dataclass(frozen=True, eq=False)
class Device(Keyed):
    """One device as a DRA selector sees it. Equal devices give equal selector results."""

    driver: str
    attributes: tuple[tuple[str, str, AttributeValue], ...] = ()
    capacity: tuple[tuple[str, str, Quantity], ...] = ()
    allow_multiple_allocations: bool = False
    _identity: tuple[Any, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # Python's 1 == True and Quantity("1Ki") == Quantity("1024") would merge
        # devices a selector can tell apart, so the key records types and representations.
        attributes = tuple(
            (domain, name, _identity(value)) for domain, name, value in self.attributes
        )
        capacity = tuple((domain, name, q.identity()) for domain, name, q in self.capacity)
        key = (self.driver, attributes, capacity, self.allow_multiple_allocations)
        object.__setattr__(self, "_identity", key)

    def _key(self) -> tuple[Any, ...]:
        return self._identity


def split_name(name: str, driver: str) -> tuple[str, str]:
    domain, slash, identifier = name.partition("/")
    return (domain, identifier) if slash else (driver, name)


def _identity(value: AttributeValue) -> tuple[Any, ...]:
    if isinstance(value, tuple):
        return ("list", tuple(_identity(item) for item in value))
    return (type(value).__name__, str(value) if isinstance(value, Semver) else value)


def _attribute(name: str, raw: Any, lists: bool) -> AttributeValue:
    where = f'attributes["{name}"]'
    kinds_allowed = (*_ATTRIBUTE_KINDS, *_LIST_KINDS) if lists else _ATTRIBUTE_KINDS
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: must be an object with one of {', '.join(kinds_allowed)}")
    entry: Mapping[str, Any] = raw  # pyright: ignore[reportUnknownVariableType]
    kinds = [kind for kind in (*_ATTRIBUTE_KINDS, *_LIST_KINDS) if kind in entry]
    if len(kinds) != 1 or len(entry) != 1:
        raise ValueError(f"{where}: must set exactly one of {', '.join(kinds_allowed)}")
    kind = kinds[0]
    if kind in _LIST_KINDS:
        if not lists:
            raise ValueError(
                f"{where}: {kind} is a list-typed attribute, which needs Kubernetes 1.36 "
                "or later (KEP-5491)"
            )
        values = entry[kind]
        if not isinstance(values, list):
            raise ValueError(f"{where}: {kind} must be a list, got {values!r}")
        items: list[Any] = values  # pyright: ignore[reportUnknownVariableType]
        if len(items) > MAX_LIST_VALUES:
            raise ValueError(f"{where}: {kind} has {len(items)} values, at most {MAX_LIST_VALUES}")
        return tuple(
            _scalar(f"{where}.{kind}[{i}]", _LIST_KINDS[kind], v) for i, v in enumerate(items)
        )
    return _scalar(where, kind, entry[kind])


def _scalar(where: str, kind: str, value: Any) -> Scalar:
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "int" and not isinstance(value, bool):
        # A protobuf Struct carries every number as a double.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and INT64_MIN <= value <= INT64_MAX:
            return value
        raise ValueError(f"{where}: int must be a 64-bit integer, got {value!r}")
    if kind == "version" and isinstance(value, str):
        try:
            return Semver.parse(value)
        except ValueError as error:
            raise ValueError(f'{where}: invalid version "{value}": {error}') from None
    raise ValueError(f"{where}: {kind} value has the wrong type: {value!r}")


def _quantity_text(raw: Any) -> str:
    if isinstance(raw, Mapping):
        raw = raw.get("value")  # pyright: ignore[reportUnknownMemberType]
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return str(raw)
    if isinstance(raw, str):
        return raw
    raise ValueError(f"must be a quantity string, got {raw!r}")


def _capacity(name: str, raw: Any) -> Quantity:
    where = f'capacity["{name}"]'
    try:
        text = _quantity_text(raw)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    try:
        return Quantity.parse(str(Quantity.parse(text)))
    except QuantityError as error:
        raise ValueError(f'{where}: invalid quantity "{text}": {error}') from None


def _mapping(spec: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = spec.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{key}: must be an object keyed by name")
    return value  # pyright: ignore[reportUnknownVariableType]


def _qualified(
    spec: Mapping[str, Any], key: str, driver: str, parse: Callable[[str, Any], _V]
) -> dict[tuple[str, str], _V]:
    """`spec[key]` by (domain, name), each entry parsed; two names for one entry are refused."""
    parsed: dict[tuple[str, str], _V] = {}
    for name, raw in _mapping(spec, key).items():
        qualified = split_name(str(name), driver)
        if qualified in parsed:
            raise ValueError(f'{key}["{name}"]: names {qualified[0]}/{qualified[1]} twice')
        parsed[qualified] = parse(str(name), raw)
    return parsed


def device_from_spec(spec: Mapping[str, Any], kubernetes_version: str | None = None) -> Device:
    """A Device from an InferenceClass device (or a ResourceSlice-like mapping).

    With the version of the cluster the device lives in, list-typed attributes are
    accepted from 1.36 on; without one they are refused, as they always were.
    Raises ValueError naming the field that is wrong (or the version, if malformed).
    """
    lists = list_attributes_enabled(kubernetes_version)
    driver = spec.get("driver", "")
    if not isinstance(driver, str):
        raise ValueError(f"driver: must be a string, got {driver!r}")
    allow = spec.get("allowMultipleAllocations", False)
    if not isinstance(allow, bool):
        raise ValueError(f"allowMultipleAllocations: must be a boolean, got {allow!r}")
    attributes = _qualified(
        spec, "attributes", driver, lambda name, raw: _attribute(name, raw, lists)
    )
    capacity = _qualified(spec, "capacity", driver, _capacity)
    return Device(
        driver=driver,
        attributes=tuple((d, n, v) for (d, n), v in sorted(attributes.items(), key=_by_name)),
        capacity=tuple((d, n, q) for (d, n), q in sorted(capacity.items(), key=_by_name)),
        allow_multiple_allocations=allow,
    )


def _by_name(item: tuple[tuple[str, str], Any]) -> tuple[str, str]:
    return item[0]


def activation(device: Device) -> dict[str, Any]:
    """The runtime value of `device`: a map of its four fields."""
    attributes = DomainMap()
    for domain, name, value in device.attributes:
        attributes.setdefault(domain, {})[name] = value
    capacity = DomainMap()
    for domain, name, quantity in device.capacity:
        capacity.setdefault(domain, {})[name] = quantity
    return {
        "driver": device.driver,
        "attributes": attributes,
        "capacity": capacity,
        "allowMultipleAllocations": device.allow_multiple_allocations,
    }


def device_from_fields(
    driver: str,
    attributes: Iterable[tuple[str, str, object]] = (),
    capacity: Iterable[tuple[str, str]] = (),
    allow_multiple_allocations: bool = False,
) -> Device:
    """A Device from fields already read: no spec mapping to walk.

    Each attribute is `(name, kind, value)` with kind one of string, int, bool or
    version; each capacity is `(name, quantity)`. Values are checked as
    `device_from_spec` checks them, with the same messages. Raises ValueError
    naming the first bad entry in the order given, so a caller that passes its
    entries sorted gets the same message in every process.

    A fleet declares a few device kinds and every call reads them again, so a
    Device built from the same fields is built once (`_BUILT`) and shared: it is
    immutable. Only Devices are kept; fields that fail are checked every time.
    """
    attributes = tuple(attributes)
    capacity = tuple(capacity)
    try:
        # The type of each value is part of the key: 1, 1.0 and True are equal in Python.
        key: Hashable = (
            driver,
            tuple((name, kind, type(raw), raw) for name, kind, raw in attributes),
            tuple((name, type(text), text) for name, text in capacity),
            allow_multiple_allocations,
        )
        hash(key)
    except TypeError:  # an unhashable value: refused below, never kept
        return _device_from_fields(driver, attributes, capacity, allow_multiple_allocations)
    return _BUILT.get(
        key,
        lambda: _device_from_fields(driver, attributes, capacity, allow_multiple_allocations),
    )


class _Built:
    """Devices by the fields they were built from; at most `entries`, then started over."""

    def __init__(self, entries: int = 1024) -> None:
        self._entries = entries
        self._lock = threading.Lock()
        self._devices: dict[Hashable, Device] = {}

    def get(self, key: Hashable, build: Callable[[], Device]) -> Device:
        with self._lock:
            found = self._devices.get(key)
        if found is None:
            found = build()
            with self._lock:
                if len(self._devices) >= self._entries:
                    self._devices.clear()
                self._devices[key] = found
        return found


_BUILT = _Built()


def _device_from_fields(
    driver: str,
    attributes: tuple[tuple[str, str, object], ...],
    capacity: tuple[tuple[str, str], ...],
    allow_multiple_allocations: bool,
) -> Device:
    attribute_values: dict[tuple[str, str], AttributeValue] = {}
    for name, kind, raw in attributes:
        qualified = split_name(name, driver)
        if qualified in attribute_values:
            raise ValueError(f'attributes["{name}"]: names {qualified[0]}/{qualified[1]} twice')
        # An InferenceClass declares scalar attributes only (its schema has no list
        # kinds), so list-typed attributes are never accepted here.
        attribute_values[qualified] = _attribute(name, {kind: raw}, lists=False)
    quantities: dict[tuple[str, str], Quantity] = {}
    for name, text in capacity:
        qualified = split_name(name, driver)
        if qualified in quantities:
            raise ValueError(f'capacity["{name}"]: names {qualified[0]}/{qualified[1]} twice')
        quantities[qualified] = _capacity(name, text)
    return Device(
        driver=driver,
        attributes=tuple((d, n, v) for (d, n), v in sorted(attribute_values.items(), key=_by_name)),
        capacity=tuple((d, n, q) for (d, n), q in sorted(quantities.items(), key=_by_name)),
        allow_multiple_allocations=allow_multiple_allocations,
    )
