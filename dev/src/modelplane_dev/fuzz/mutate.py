"""Structured mutations of Kubernetes objects, as plain JSON values.

Each mutation breaks one thing the way malformed input breaks it: a value of
the wrong type, a missing field, a null, a string too long or badly spelled, a
number out of range, a duplicated list item, a map that became a list,
metadata that is not a map. Everything is driven by the caller's seeded
`random.Random` and walks maps in sorted key order, so a seed names one
sequence of mutations on every machine.

Values stay representable in a protobuf Struct (and in Kubernetes JSON): no
NaN or infinity, every map key a string.
"""

import copy
import random
from collections.abc import Callable
from typing import Any, Final, cast

Path = tuple[str | int, ...]
Obj = dict[str, Any]

LONG: Final = "x" * 300
ODD_STRINGS: Final = ("", "UPPER_case", "a b", "-leading", "trailing.", "é", "1.2.3.4.5", LONG)
ODD_NUMBERS: Final = (-1, 0, 1.5, 10**9, -(10**12))
WRONG_TYPES: Final = ("garbage", 7, 2.5, True, ["x", 1], {"garbage": {"nested": []}})
NOT_MAPS: Final = ("metadata", 5, ["name"], True)
GARBAGE_OBJECTS: Final[tuple[Obj, ...]] = (
    {},
    {"metadata": "not a map"},
    {"metadata": {"name": 5}},
    {"apiVersion": "v1", "kind": "Other", "metadata": {"name": "other"}},
    {"metadata": {"name": "garbage"}, "spec": [], "status": "broken"},
)


def paths(value: Any, prefix: Path = ()) -> list[Path]:
    """Every path in `value`, the root first, maps in sorted key order."""
    found: list[Path] = [prefix]
    if isinstance(value, dict):
        for key in sorted(cast(Obj, value)):
            found.extend(paths(value[key], (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(cast(list[Any], value)):
            found.extend(paths(item, (*prefix, index)))
    return found


def get(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _replace(obj: Obj, path: Path, value: Any) -> None:
    get(obj, path[:-1])[path[-1]] = value


def wrong_type(obj: Obj, path: Path, rng: random.Random) -> str:
    current = get(obj, path)
    choices = [w for w in WRONG_TYPES if _json_type(w) != _json_type(current)]
    value = copy.deepcopy(rng.choice(choices))
    _replace(obj, path, value)
    return f"{_json_type(current)} -> {value!r}"


def null(obj: Obj, path: Path, rng: random.Random) -> str:
    _replace(obj, path, None)
    return "null"


def delete(obj: Obj, path: Path, rng: random.Random) -> str:
    del get(obj, path[:-1])[path[-1]]
    return "deleted"


def odd_string(obj: Obj, path: Path, rng: random.Random) -> str:
    value = rng.choice(ODD_STRINGS)
    _replace(obj, path, value)
    return f"-> {value[:20]!r}{'...' if len(value) > 20 else ''}"


def odd_number(obj: Obj, path: Path, rng: random.Random) -> str:
    value = rng.choice(ODD_NUMBERS)
    _replace(obj, path, value)
    return f"-> {value!r}"


def duplicate(obj: Obj, path: Path, rng: random.Random) -> str:
    items = cast(list[Any], get(obj, path))
    index = rng.randrange(len(items))
    items.insert(index, copy.deepcopy(items[index]))
    return f"item {index} duplicated"


def swap_container(obj: Obj, path: Path, rng: random.Random) -> str:
    current = get(obj, path)
    if isinstance(current, dict):
        # In key order: a map read from a Struct lists its keys in the protobuf
        # runtime's order, which need not be the same in another process.
        mapping = cast(Obj, current)
        _replace(obj, path, [mapping[key] for key in sorted(mapping)])
        return "map -> list"
    _replace(obj, path, {str(i): item for i, item in enumerate(cast(list[Any], current))})
    return "list -> map"


Mutation = Callable[[Obj, Path, random.Random], str]


def _applicable(value: Any, path: Path) -> list[Mutation]:
    ops: list[Mutation] = []
    if path:
        ops += [wrong_type, null, delete]
    if isinstance(value, str):
        ops.append(odd_string)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        ops.append(odd_number)
    elif isinstance(value, list) and value:
        ops += [duplicate, swap_container]
    elif isinstance(value, dict) and path:
        ops.append(swap_container)
    return ops


def mutate(obj: Obj, rng: random.Random) -> tuple[Obj, str]:
    """A mutated deep copy of `obj`, and what was done where (`spec.replicas: null`)."""
    mutated = copy.deepcopy(obj)
    if rng.random() < 0.1:
        value = rng.choice(NOT_MAPS)
        mutated["metadata"] = copy.deepcopy(value)
        return mutated, f"metadata: not a map -> {value!r}"
    while True:
        path = rng.choice(paths(mutated))
        ops = _applicable(get(mutated, path), path)
        if ops:
            break
    what = rng.choice(ops)(mutated, path, rng)
    return mutated, f"{dotted(path) or '(root)'}: {what}"


def dotted(path: Path) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text


def garbage(rng: random.Random) -> Obj:
    """An object that is no Kubernetes object of any kind."""
    return copy.deepcopy(rng.choice(GARBAGE_OBJECTS))
