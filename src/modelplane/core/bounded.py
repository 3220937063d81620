"""A bounded least-recently-used memo: the one kept by every owner of a cache.

A memo here keeps what is cheap to make again (a model read from bytes, a CEL
device built from its spec), so the bound only caps memory: a value evicted is
made again, never answered differently.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(Generic[K, V]):
    """Least recently used values, at most `entries` of them; safe to share between threads."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self._entries:
                self._values.popitem(last=False)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The value for `key`, made (outside the lock) and kept when missing. `make`
        may raise; nothing is kept then."""
        found = self.get(key)
        if found is None:
            found = make()
            self.put(key, found)
        return found


S = TypeVar("S")


class ByIdentity(Generic[S, V]):
    """Values made from an object, kept by the very object: for sources that are
    never changed once made (models a runner reads once per distinct bytes and hands
    out call after call), where a key of their content would cost what making the
    value costs. An entry holds its source, so the source's id is not reused while
    the entry lives. At most `entries`; past that, everything is dropped and made
    again. Safe to share between threads."""

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._lock = threading.Lock()
        self._values: dict[int, tuple[S, V]] = {}

    def __len__(self) -> int:
        return len(self._values)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def get_or_make(self, source: S, make: Callable[[S], V]) -> V:
        """`make(source)`, kept for `source`; `make` may raise, and nothing is kept then."""
        with self._lock:
            found = self._values.get(id(source))
        if found is not None and found[0] is source:
            return found[1]
        value = make(source)
        with self._lock:
            if len(self._values) >= self._entries:
                self._values.clear()
            self._values[id(source)] = (source, value)
        return value
