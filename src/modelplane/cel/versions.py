"""Which DRA selector environment a Kubernetes version gives, as k8s.io/dynamic-resource-allocation.

The kube-scheduler compiles selectors it finds in stored objects with the
StoredExpressions environment: the newest `device` type and every function,
whatever the version or feature gates, so a selector the API server once
admitted keeps working. The API server checks a new or changed selector with
NewExpressions, which only offers what the version enables.

Modelplane gates one thing by version, list-typed device attributes (KEP-5491,
Kubernetes 1.36): before it, devices carry only scalar attributes, `includes()`
is undeclared and attribute values are typed `any`, which the checker accepts
wherever it accepts dyn except as the range of a macro. Callers that name no
version get the stored environment, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from modelplane.cel import types as t
from modelplane.cel.functions import FUNCTIONS

LIST_ATTRIBUTES_SINCE: Final = (1, 36)
_VERSION: Final = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?")


def parse_version(text: str) -> tuple[int, int]:
    """(major, minor) of "1.36", "v1.36.2" or "1.36.0-alpha.1"; ValueError otherwise."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a Kubernetes version: {text!r} (expected MAJOR.MINOR, like 1.36)")
    return int(match.group(1)), int(match.group(2))


def list_attributes_enabled(kubernetes_version: str | None) -> bool:
    """Whether devices may carry list-typed attributes. Without a version, no."""
    return kubernetes_version is not None and (
        parse_version(kubernetes_version) >= LIST_ATTRIBUTES_SINCE
    )


@dataclass(frozen=True, slots=True)
class SelectorEnvironment:
    """What a selector may use: the `device` fields' types and the functions."""

    name: str
    attribute_type: t.CelType
    excluded_functions: frozenset[str]
    functions: dict[str, t.Function] = field(init=False, compare=False, repr=False)
    """The functions it declares, built once with the environment (its own table)."""

    def __post_init__(self) -> None:
        table = {n: f for n, f in FUNCTIONS.items() if n not in self.excluded_functions}
        object.__setattr__(self, "functions", table)

    @property
    def structs(self) -> dict[t.CelType, dict[str, t.CelType]]:
        return {t.DEVICE: t.device_fields(self.attribute_type)}

    def accepts_result(self, result: t.CelType) -> bool:
        """DRA's rule: a selector evaluates to bool or to the attribute value type."""
        return result.name in ("bool", self.attribute_type.name)


STORED: Final = SelectorEnvironment("StoredExpressions", t.DYN, frozenset())
BEFORE_LIST_ATTRIBUTES: Final = SelectorEnvironment(
    "NewExpressions before 1.36", t.ANY, frozenset({"includes"})
)


def selector_environment(kubernetes_version: str | None) -> SelectorEnvironment:
    """The environment a selector is checked in for a cluster at `kubernetes_version`.

    None: the stored environment (the kube-scheduler's). A version: what its API
    server admits for a new selector; 1.36 and later offer list-typed attributes,
    as the stored environment does.
    """
    if kubernetes_version is None or list_attributes_enabled(kubernetes_version):
        return STORED
    return BEFORE_LIST_ATTRIBUTES
