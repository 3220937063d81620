"""Validate anything Modelplane renders, wherever its schema lives.

A custom resource is checked against its CRD, a built-in kind strictly against
the Kubernetes schemas of the cluster's version, and a provider-kubernetes
Object both as itself and through the manifest it carries, so one call covers
an Object and the Deployment, LeaderWorkerSet or PodGroup inside it (an
Observe-only Object's manifest only names what it reads, and is not checked).
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from modelplane.core.kinds import PodSite, pod_sites
from modelplane_cli.schema.builtin import validate_builtin
from modelplane_cli.schema.errors import FieldError, go_quote, not_supported, subject
from modelplane_cli.schema.registry import SchemaRegistry
from modelplane_cli.schema.semantics import CONTROLLER_RESTART_POLICIES, RESTART_POLICIES
from modelplane_cli.schema.upstream import reference_crd_directory

# PodSite and pod_sites are re-exported: callers that validate pod templates read them
# too; reference_crd_directory is where the upstream CRDs are (`schema.upstream`).
__all__ = [
    "ManifestCheck",
    "ManifestValidator",
    "PodSite",
    "pod_sites",
    "reference_crd_directory",
]


@dataclass(frozen=True)
class ManifestCheck:
    """The API server's problems with a manifest, and its pods' (see `check`)."""

    rejected: list[FieldError]
    pods: list[FieldError]


_OBJECT_GROUPS = ("kubernetes.m.crossplane.io/", "kubernetes.crossplane.io/")


def _moved(error: FieldError, old: str, new: str) -> FieldError:
    """`error` reported under `new` instead of its path prefix `old`, message included.

    Built-in schema messages name the field as `unknown field "<path>"` or
    `<path> in body`; only those mentions are rewritten.
    """
    path = new + error.path[len(old) :]
    message = error.message.replace(go_quote(error.path), go_quote(path))
    message = message.replace(subject(error.path), subject(path))
    return FieldError(path, message)


def _nested(obj: dict[str, Any], *keys: str) -> Any:
    """`obj[k1][k2]...`, or None where a level is missing or not an object."""
    value: Any = obj
    for name in keys:
        if not isinstance(value, dict):
            return None
        value = cast(dict[str, Any], value).get(name)
    return value


class ManifestValidator:
    def __init__(self, registry: SchemaRegistry, kubernetes_version: str = "1.34") -> None:
        self.registry = registry
        self.kubernetes_version = kubernetes_version

    @classmethod
    def empty(cls, kubernetes_version: str = "1.34") -> "ManifestValidator":
        """A validator that knows only the built-in kinds."""
        return cls(SchemaRegistry(), kubernetes_version)

    @classmethod
    def from_directories(
        cls, *directories: Path, kubernetes_version: str = "1.34"
    ) -> "ManifestValidator":
        """Load every CRD and XRD (`*.yaml`, recursively) under the directories."""
        files = sorted(path for d in directories for path in d.rglob("*.yaml"))
        return cls(SchemaRegistry.from_files(files), kubernetes_version)

    def validate(self, obj: dict[str, Any], *, pods: bool = False) -> list[FieldError]:
        """Problems with `obj` and, for a provider-kubernetes Object, with its manifest.

        With `pods`, every pod spec a custom resource embeds (see `pod_sites`) is
        also validated as a v1 Pod of the cluster's version, with the labels and
        annotations its pods get: a CRD carries its own copy of PodSpec, which can
        be older or looser than the cluster's. A built-in kind's schema already
        includes its pod template.

        Raises LookupError for a kind with no CRD here and no built-in schema.
        """
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        schema = None
        if isinstance(api_version, str) and isinstance(kind, str):
            schema = self.registry.get(api_version, kind)
        if schema is None:
            problems = validate_builtin(obj, self.kubernetes_version)
        else:
            problems = schema.validate(obj)
            if pods:
                # A field both schemas reject, or that a KServe block's template and
                # worker share, is reported once.
                problems = sorted(set(problems) | set(self._pod_problems(obj)))
        if (
            kind == "Object"
            and isinstance(api_version, str)
            and api_version.startswith(_OBJECT_GROUPS)
            # An Observe-only Object's manifest names what it reads; nothing applies it.
            and _nested(obj, "spec", "managementPolicies") != ["Observe"]
        ):
            manifest = _nested(obj, "spec", "forProvider", "manifest")
            if isinstance(manifest, dict):
                prefix = "spec.forProvider.manifest"
                problems += [
                    FieldError(f"{prefix}.{p.path}" if p.path else prefix, p.message)
                    for p in self.validate(manifest, pods=pods)
                ]
        return sorted(problems)

    def check(
        self, manifest: dict[str, Any], kubernetes_version: str | None = None
    ) -> "ManifestCheck":
        """What the API server says of `manifest`, and what its workload controller would.

        `rejected` are the API server's problems: the CRD's schema and rules for a
        custom resource, the strict schema and Go validation of the cluster's
        version for a built-in kind. `pods` are the problems of the pod templates a
        custom resource embeds, which the API server does not see but the
        workload's controller hits when it creates pods from them.

        Raises LookupError for a kind with no CRD here and no built-in schema.
        """
        version = kubernetes_version or self.kubernetes_version
        api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
        schema = None
        if isinstance(api_version, str) and isinstance(kind, str):
            schema = self.registry.get(api_version, kind)
        if schema is None:
            return ManifestCheck(validate_builtin(manifest, version), [])
        pods = sorted(set(self._pod_problems(manifest, version)))
        return ManifestCheck(sorted(schema.admit(manifest)[1]), pods)

    def _pod_problems(
        self, manifest: dict[str, Any], kubernetes_version: str | None = None
    ) -> list[FieldError]:
        version = kubernetes_version or self.kubernetes_version
        problems: list[FieldError] = []
        for site in pod_sites(manifest):
            # A template leaves the pod's name to its controller; the schema wants one.
            metadata: dict[str, Any] = {"name": "pod"}
            for key in ("labels", "annotations"):
                if key in site.metadata:
                    metadata[key] = site.metadata[key]
            for spec_path, spec in site.specs:
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
                # Every workload controller (StatefulSet for LWS, Deployment or LWS for
                # KServe) refuses a template that does not restart Always.
                policy = spec.get("restartPolicy")
                if policy in RESTART_POLICIES and policy not in CONTROLLER_RESTART_POLICIES:
                    problems.append(
                        FieldError(
                            f"{spec_path}.restartPolicy",
                            not_supported(policy, CONTROLLER_RESTART_POLICIES),
                        )
                    )
                for problem in validate_builtin(pod, version):
                    # The pod was built from `metadata` and `spec` alone, so every
                    # problem lies under one of the two.
                    if problem.path.startswith("metadata"):
                        problems.append(_moved(problem, "metadata", site.path))
                    else:
                        problems.append(_moved(problem, "spec", spec_path))
        return problems
