"""A port of blang/semver v4, the value behind CEL's semver().

parse(text) is blang's strict Parse: no "v" prefix, no leading zeros, all three
numbers present, no whitespace. parse(text, normalize=True) is the Kubernetes
semver(text, true) overload: strip one leading "v", strip leading zeros from
each of the three dot-separated parts, fill a missing minor and patch with 0,
and reject a shortened version that carries a pre-release or build suffix.

Ordering is semver 2.0.0 section 11 with build metadata ignored, which is also
what CEL's == uses (Version.EQ). Error messages are blang's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering
from typing import Final

from modelplane.cel.keyed import Keyed

_NUMBERS: Final = frozenset("0123456789")
_ALPHANUM: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX: Final = (1 << 64) - 1


class SemverError(ValueError):
    """The string is not a semantic version; the message is blang/semver's."""


def _contains_only(text: str, allowed: frozenset[str]) -> bool:
    return all(char in allowed for char in text)


def _has_leading_zeroes(text: str) -> bool:
    return len(text) > 1 and text[0] == "0"


def _quote(text: str) -> str:
    """Go's %q for the short strings blang puts in its messages."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(c if c.isprintable() else repr(c)[1:-1] for c in escaped) + '"'


def _parse_uint(text: str) -> int:
    """strconv.ParseUint(text, 10, 64), with its error messages."""
    if not text or not _contains_only(text, _NUMBERS):
        raise SemverError(f"strconv.ParseUint: parsing {_quote(text)}: invalid syntax")
    value = int(text)
    if value > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {_quote(text)}: value out of range")
    return value


def _parse_number(text: str, part: str) -> int:
    if not _contains_only(text, _NUMBERS):
        raise SemverError(f"Invalid character(s) found in {part} number {_quote(text)}")
    if _has_leading_zeroes(text):
        message = f"{part.capitalize()} number must not contain leading zeroes {_quote(text)}"
        raise SemverError(message)
    return _parse_uint(text)


def _parse_prerelease(text: str) -> int | str:
    if not text:
        raise SemverError("Prerelease is empty")
    if _contains_only(text, _NUMBERS):
        if _has_leading_zeroes(text):
            raise SemverError(
                f"Numeric PreRelease version must not contain leading zeroes {_quote(text)}"
            )
        return _parse_uint(text)
    if _contains_only(text, _ALPHANUM):
        return text
    raise SemverError(f"Invalid character(s) found in prerelease {_quote(text)}")


def _compare_prerelease(left: int | str, right: int | str) -> int:
    if isinstance(left, int) and isinstance(right, int):
        return (left > right) - (left < right)
    if isinstance(left, int):
        return -1  # numeric identifiers sort before alphanumeric ones
    if isinstance(right, int):
        return 1
    return (left > right) - (left < right)


def _normalize(text: str) -> str:
    """Kubernetes' normalizeAndParse, which is ParseTolerant without the whitespace trim."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            if not stripped or stripped[0] not in _NUMBERS:
                stripped = "0" + stripped
            parts[index] = stripped
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts.extend(["0"] * (3 - len(parts)))
    return ".".join(parts)


@total_ordering
@dataclass(frozen=True, slots=True, eq=False)
class Semver(Keyed):
    """A semantic version (blang/semver v4 Version)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    @staticmethod
    def parse(text: str, normalize: bool = False) -> Semver:
        """Strict semver.Parse, or the Kubernetes normalising parse when asked."""
        return _parse(_normalize(text) if normalize else text)

    def compare(self, other: Semver) -> int:
        """Version.Compare: -1, 0 or 1; build metadata has no precedence."""
        for mine, theirs in (
            (self.major, other.major),
            (self.minor, other.minor),
            (self.patch, other.patch),
        ):
            if mine != theirs:
                return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for mine_pre, their_pre in zip(self.pre, other.pre, strict=False):
            result = _compare_prerelease(mine_pre, their_pre)
            if result:
                return result
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def _key(self) -> tuple[int, int, int, tuple[int | str, ...]]:
        # Equal exactly when compare() is 0: build metadata has no precedence.
        return self.major, self.minor, self.patch, self.pre

    def __lt__(self, other: Semver) -> bool:
        return self.compare(other) < 0

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(part) for part in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


def _parse(text: str) -> Semver:
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _parse_number(parts[0], "major")
    minor = _parse_number(parts[1], "minor")
    patch_text = parts[2]
    build: list[str] = []
    prerelease: list[str] = []
    build_index = patch_text.find("+")
    if build_index != -1:
        build = patch_text[build_index + 1 :].split(".")
        patch_text = patch_text[:build_index]
    pre_index = patch_text.find("-")
    if pre_index != -1:
        prerelease = patch_text[pre_index + 1 :].split(".")
        patch_text = patch_text[:pre_index]
    patch = _parse_number(patch_text, "patch")
    pre = tuple(_parse_prerelease(part) for part in prerelease)
    for part in build:
        if not part:
            raise SemverError("Build meta data is empty")
        if not _contains_only(part, _ALPHANUM):
            raise SemverError(f"Invalid character(s) found in build meta data {_quote(part)}")
    return Semver(major, minor, patch, pre, tuple(build))
