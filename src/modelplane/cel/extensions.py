"""Libraries of the Kubernetes CEL environment beyond the standard ones.

The string extensions of cel-go's ext.Strings (version 2, without format and
strings.quote), the Kubernetes regex library (find, findAll) and the Kubernetes
lists library (isSorted, sum, min, max, indexOf, lastIndexOf). Indices count
Unicode code points, as cel-go's do.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Callable, Sequence
from typing import Any, Final

from modelplane.cel import arguments, budget
from modelplane.cel import types as t
from modelplane.cel.chrono import Duration
from modelplane.cel.operators import add
from modelplane.cel.stdlib import compile_regex
from modelplane.cel.values import EvalError, Uint, compare, equal, type_name

# ASCII letters only, as cel-go's lowerAscii/upperAscii.
_TO_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_TO_UPPER: Final = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)
_SUMMABLE_NAMES: Final = frozenset({"int", "uint", "double", t.DURATION.name})


def _out_of_range(index: int) -> EvalError:
    return EvalError(f"index out of range: {index}")


def char_at(text: Any, index: Any) -> str:
    source, position = arguments.text(text), arguments.integer(index)
    if not 0 <= position <= len(source):
        raise _out_of_range(position)
    return source[position : position + 1]


def index_of(receiver: Any, item: Any, offset: Any = None) -> int:
    if isinstance(receiver, tuple):
        if offset is not None:
            raise EvalError(arguments.NO_OVERLOAD)
        for position, element in enumerate(arguments.items(receiver)):
            if equal(element, item):
                return position
        return -1
    source, needle = arguments.text(receiver), arguments.text(item)
    start = 0 if offset is None else arguments.integer(offset)
    if (answer := _unsearched(source, needle, start)) is not None:
        return answer
    budget.charge_size(len(source), 10)
    return source.find(needle, start)


def _unsearched(source: str, needle: str, start: int) -> int | None:
    """The answer of a search from `start` that needs no search, or None.

    cel-go (ext/strings.go since v0.22): an empty needle is found at the offset
    itself, and an offset past the end finds nothing rather than failing.
    """
    if not needle:
        return start
    if start < 0:
        raise _out_of_range(start)
    if start >= len(source):
        return -1
    return None


def last_index_of(receiver: Any, item: Any, offset: Any = None) -> int:
    if isinstance(receiver, tuple):
        if offset is not None:
            raise EvalError(arguments.NO_OVERLOAD)
        elements = arguments.items(receiver)
        for position in range(len(elements) - 1, -1, -1):
            if equal(elements[position], item):
                return position
        return -1
    source, needle = arguments.text(receiver), arguments.text(item)
    if offset is None:
        budget.charge_size(len(source), 10)
        return source.rfind(needle) if needle else len(source)
    start = arguments.integer(offset)
    if (answer := _unsearched(source, needle, start)) is not None:
        return answer
    budget.charge_size(len(source), 10)
    start = min(start, len(source) - len(needle))
    if start < 0:
        return -1
    return source.rfind(needle, 0, start + len(needle))


def lower_ascii(text: Any) -> str:
    source = arguments.text(text)
    budget.charge_size(len(source), 10)
    return source.translate(_TO_LOWER)


def upper_ascii(text: Any) -> str:
    source = arguments.text(text)
    budget.charge_size(len(source), 10)
    return source.translate(_TO_UPPER)


def replace(text: Any, old: Any, new: Any, limit: Any = -1) -> str:
    source, target, replacement, count = (
        arguments.text(text),
        arguments.text(old),
        arguments.text(new),
        arguments.integer(limit),
    )
    budget.charge_size(len(source) * max(1, len(replacement)), 10)
    return source.replace(target, replacement, count)


def split(text: Any, separator: Any, limit: Any = -1) -> tuple[str, ...]:
    source, sep, count = arguments.text(text), arguments.text(separator), arguments.integer(limit)
    budget.charge_size(len(source), 10)
    if count == 0:
        return ()
    if sep:
        return tuple(source.split(sep, count - 1 if count > 0 else -1))
    runes = list(source)
    if 0 < count < len(runes):
        return (*runes[: count - 1], "".join(runes[count - 1 :]))
    return tuple(runes)


def substring(text: Any, start: Any, end: Any = None) -> str:
    source, first = arguments.text(text), arguments.integer(start)
    last = len(source) if end is None else arguments.integer(end)
    if not 0 <= first <= len(source):
        raise _out_of_range(first)
    if end is not None and last < first:
        raise EvalError(f"invalid substring range. start: {first}, end: {last}")
    if last > len(source):
        raise _out_of_range(last)
    return source[first:last]


# Go's unicode.IsSpace, which strings.TrimSpace (cel-go's `trim`) strips: Python's
# str.strip() also strips the separators U+001C to U+001F.
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def trim(text: Any) -> str:
    return arguments.text(text).strip(_GO_SPACE)


def join(items: Any, separator: Any = "") -> str:
    parts = arguments.items(items)
    if any(type(part) is not str for part in parts):
        raise EvalError(arguments.NO_OVERLOAD)
    return arguments.text(separator).join(parts)


def find(text: Any, pattern: Any) -> str:
    source = arguments.text(text)
    budget.charge_size(len(source), 10)
    found = compile_regex(arguments.text(pattern)).search(source)
    return "" if found is None else str(found.group(0))


def find_all(text: Any, pattern: Any, limit: Any = -1) -> tuple[str, ...]:
    source, count = arguments.text(text), arguments.integer(limit)
    budget.charge_size(len(source), 10)
    if count == 0:
        return ()
    found: list[str] = []
    for match in compile_regex(arguments.text(pattern)).finditer(source):
        found.append(str(match.group(0)))
        if len(found) == count:
            break
    return tuple(found)


def is_sorted(items: Any) -> bool:
    elements = arguments.items(items)
    return all((compare(a, b) or 0) <= 0 for a, b in itertools.pairwise(elements))


def total(items: Any, zero: Any = 0) -> Any:
    elements = arguments.items(items)
    if any(type_name(element) not in _SUMMABLE_NAMES for element in elements):
        raise EvalError(arguments.NO_OVERLOAD)
    if not elements:
        return zero
    result = elements[0]
    for element in elements[1:]:
        result = add(result, element)
    return result


def _sum_of(args: Sequence[t.CelType]) -> Callable[[Any], Any]:
    """sum() with the zero of the list's static element type, as cel-go's overloads have:
    `[].sum()` is 0, but an empty list(double) sums to 0.0 and list(duration) to 0s."""
    receiver = args[0]
    element = receiver.params[0].name if receiver.name == "list" else "dyn"
    zero = _ZEROS.get(element, 0)
    return lambda items: total(items, zero)


_ZEROS: Final[dict[str, Any]] = {
    "uint": Uint(0),
    "double": 0.0,
    t.DURATION.name: Duration(0),
}


def _extreme(items: Any, name: str, sign: int) -> Any:
    elements = arguments.items(items)
    if not elements:
        raise EvalError(f"{name} called on empty list")
    best = elements[0]
    for element in elements[1:]:
        if (compare(element, best) or 0) * sign > 0:
            best = element
    return best


def minimum(items: Any) -> Any:
    return _extreme(items, "min", -1)


def maximum(items: Any) -> Any:
    return _extreme(items, "max", 1)


_S, _I, _LA = t.STRING, t.INT, t.list_of(t.A)
_SUMMABLE: Final = (t.INT, t.UINT, t.DOUBLE, t.DURATION)

EXTENSIONS: Final = (
    t.Function("charAt", t.members(((_S, _I), _S)), char_at),
    t.Function(
        "indexOf", t.members(((_S, _S), _I), ((_S, _S, _I), _I), ((_LA, t.A), _I)), index_of
    ),
    t.Function(
        "lastIndexOf",
        t.members(((_S, _S), _I), ((_S, _S, _I), _I), ((_LA, t.A), _I)),
        last_index_of,
    ),
    t.Function("lowerAscii", t.members(((_S,), _S)), lower_ascii),
    t.Function("upperAscii", t.members(((_S,), _S)), upper_ascii),
    t.Function("replace", t.members(((_S, _S, _S), _S), ((_S, _S, _S, _I), _S)), replace),
    t.Function("split", t.members(((_S, _S), t.list_of(_S)), ((_S, _S, _I), t.list_of(_S))), split),
    t.Function("substring", t.members(((_S, _I), _S), ((_S, _I, _I), _S)), substring),
    t.Function("trim", t.members(((_S,), _S)), trim),
    t.Function("join", t.members(((t.list_of(_S),), _S), ((t.list_of(_S), _S), _S)), join),
    t.Function("find", t.members(((_S, _S), _S)), find),
    t.Function(
        "findAll", t.members(((_S, _S), t.list_of(_S)), ((_S, _S, _I), t.list_of(_S))), find_all
    ),
    t.Function("isSorted", t.members(((_LA,), t.BOOL)), is_sorted),
    t.Function("sum", t.members(*(((t.list_of(x),), x) for x in _SUMMABLE)), total, _sum_of),
    t.Function("min", t.members(((_LA,), t.A)), minimum),
    t.Function("max", t.members(((_LA,), t.A)), maximum),
)
