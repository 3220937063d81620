"""Helm charts a Managed stack installs: where each comes from and at which version.

Every component of the serving stack (Node Feature Discovery, the NVIDIA DRA
driver, LeaderWorkerSet, KServe, the gateway, each in-cluster scheduler) is a
`Component`: the `spec.stack.versions` key that overrides its pinned version,
and the Helm releases it is made of, installed in order. The stack's own
components live in `modelplane.stack.components`; each scheduler module in
`modelplane.conventions.schedulers` carries its own, so adding a scheduler stays
one module.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

# provider-helm's namespaced Release, which installs every chart Modelplane installs.
RELEASE_API_VERSION: Final = "helm.m.crossplane.io/v1beta1"
# Every composed Release's `spec.rollbackLimit`. provider-helm (v1.4) treats a release
# in state `failed` whose chart and values are unchanged as up to date, and retries
# (uninstalls a failed first install, rolls back a failed upgrade, then installs
# again) only when `rollbackLimit` is set: without it an install that timed out once
# (pods Pending while nodes come up) stays failed until its spec changes. The count
# resets once the release is deployed, so this is a budget per failure episode.
RELEASE_ROLLBACK_LIMIT: Final = 10


@dataclass(frozen=True)
class Chart:
    """A chart in a repository (https or oci://), or a package URL with `{version}` in it."""

    name: str
    repository: str = ""
    url: str = ""

    def for_provider(self, version: str) -> dict[str, str]:
        """provider-helm's `spec.forProvider.chart` for this chart at `version`."""
        if self.url:
            return {"name": self.name, "url": self.url.format(version=version)}
        return {"name": self.name, "repository": self.repository, "version": version}


@dataclass(frozen=True)
class ReleaseSpec:
    """One Helm release of a component: its name and namespace on the workload cluster."""

    name: str
    chart: Chart
    namespace: str
    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)


@dataclass(frozen=True)
class Component:
    """A part of the serving stack: its override key, pinned version and releases.

    `releases` install in order, each once the one before reports Ready (a CRD
    chart before the chart that uses it).
    """

    key: str
    title: str
    version: str
    releases: tuple[ReleaseSpec, ...]

    @property
    def release(self) -> str:
        """The name of its release, for a component of one (`helm`); a component of
        several names each where it declares them."""
        (only,) = self.releases
        return only.name

    @classmethod
    def helm(
        cls,
        key: str,
        title: str,
        version: str,
        chart: Chart,
        namespace: str = "",
        values: Mapping[str, Any] | None = None,
    ) -> "Component":
        """A component of one Helm release, named for its chart and installed in the
        namespace named for it unless `namespace` says otherwise.

        Read as one row of the pins table: `spec.stack.versions` key, title, pinned
        version, chart (`Component.helm("kueue", "Kueue", "0.19.2", CHART, ...)`).
        """
        release = ReleaseSpec(
            chart.name, chart, namespace or chart.name, MappingProxyType(dict(values or {}))
        )
        return cls(key, title, version, (release,))
