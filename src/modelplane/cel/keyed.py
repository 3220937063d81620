"""Equality and hashing by an identity key, for CEL values that define their own equality.

A CEL value's equality is rarely its fields': a Semver ignores its build metadata,
a Timestamp its UTC offset, a Device compares by a typed key that keeps `1` and
`true` apart. Each says what identifies it (`_key`); equality and hash follow
from that one tuple, so the two can never disagree.
"""

from abc import ABC, abstractmethod
from collections.abc import Hashable


class Keyed(ABC):
    """Equal to a value of the same class exactly when their `_key()`s are equal."""

    __slots__ = ()

    @abstractmethod
    def _key(self) -> Hashable:
        """What identifies this value: equal keys, equal values."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())
