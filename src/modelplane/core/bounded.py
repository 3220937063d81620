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
