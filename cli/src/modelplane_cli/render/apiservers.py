"""The API servers of the workload clusters: what applying an Object's manifest answers.

provider-kubernetes applies an Object's manifest to the cluster its
`providerConfigRef` reaches. Here that cluster's API server is simulated:

- **Which cluster**: the ProviderConfig the Object names, the composite that
  composed it (an InferenceCluster) and the version that cluster runs
  (`modelplane.provisioning.kubernetes_version`).
  An Object whose ProviderConfig is not in the world is checked against the
  default version.
- **Built-in kinds** are validated strictly against that Kubernetes version's
  schemas and the Go validation rules Modelplane's templates can break
  (`modelplane_cli.schema`), as `kubectl apply` would (strict field validation).
- **Custom resources** are validated against the CRDs given (`--crds`, by default
  the upstream CRDs beside the checkout). A kind none of them defines is refused as
  the API server refuses it (`no matches for kind`). With no CRDs at all, custom
  resources cannot be checked and are only noted.
- **Pod templates inside a custom resource** (LeaderWorkerSet, LLMInferenceService)
  pass the API server but not the controller that creates pods from them; that is
  reported apart, as the workload never becoming available.

Messages are the API server's, wrapped the way provider-kubernetes and
crossplane-runtime wrap them in the Object's `Synced` condition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelplane_models import InferenceCluster

from modelplane.core.issues import InvalidInputError, parse_object
from modelplane.core.vocabulary import INFERENCE_CLUSTER
from modelplane.provisioning import kubernetes_version as provisioned_version
from modelplane.workloads import DEFAULT_KUBERNETES_VERSION
from modelplane_cli.render.world import View, World, controller_reference, group_of
from modelplane_cli.schema import FieldError, ManifestValidator, SchemaRegistry
from modelplane_cli.schema.builtin import QUANTITY_SYNTAX
from modelplane_cli.schema.definitions import is_definition
from modelplane_cli.schema.registry import load_documents

# Management policies under which the provider writes the manifest to the cluster.
_WRITING_POLICIES = frozenset({"*", "Create", "Update"})
_UNKNOWN_FIELD = "unknown field "


@dataclass(frozen=True)
class Answer:
    """What applying one manifest gave.

    `rejected`: the API server refused it, with its message. `pods`: it was stored,
    but its controller cannot create pods from its templates. `unchecked`: its kind
    could not be validated (no CRDs), so it is taken as given.
    """

    rejected: str | None = None
    pods: str | None = None
    unchecked: str | None = None


class WorkloadApiServers:
    """Every workload cluster's API server, checking manifests against schemas.

    `crds` are the CRD files and directories to check custom resources against;
    None means no CRDs were given, so custom resources are taken as given. They are
    read when a manifest of their group first needs them (several megabytes of
    YAML that a fleet of built-in kinds never uses).
    """

    def __init__(self, crds: Sequence[Path] | None = None) -> None:
        self._validator = ManifestValidator.empty()
        self._have_crds = crds is not None
        self._catalog = CrdFiles(crds or [])

    def apply(self, world: World, obj: View) -> Answer:
        """Apply the manifest of the provider-kubernetes Object `obj`."""
        spec: Mapping[str, Any] = obj.get("spec") or {}
        policies = spec.get("managementPolicies") or ["*"]
        if not _WRITING_POLICIES.intersection(policies):
            return Answer()  # observed only: nothing is written, nothing validated
        manifest = (spec.get("forProvider") or {}).get("manifest")
        if not isinstance(manifest, dict):
            return Answer(rejected="spec.forProvider.manifest: Required value")
        version = kubernetes_version(world, spec.get("providerConfigRef"))
        self._catalog.load_group(group_of(str(manifest.get("apiVersion", ""))), self._validator)
        try:
            found = self._validator.check(dict(manifest), version)
        except LookupError:
            api_version, kind = manifest.get("apiVersion"), manifest.get("kind")
            if self._have_crds:
                return Answer(rejected=f'no matches for kind "{kind}" in version "{api_version}"')
            return Answer(unchecked=f"{kind}.{group_of(str(api_version))}")
        except ValueError as exc:  # a version kubernetes-validate has no schemas for
            return Answer(unchecked=str(exc))
        if found.rejected:
            return Answer(rejected=server_message(manifest, found.rejected))
        if found.pods:
            return Answer(pods=f"pods cannot be created from its template: {aggregate(found.pods)}")
        return Answer()

    def field_errors(self, world: World, obj: View) -> list[FieldError]:
        """The fields of the Object `obj`'s manifest its API server refused, with their
        paths; empty when it was not refused field by field (or not checked)."""
        spec: Mapping[str, Any] = obj.get("spec") or {}
        manifest = (spec.get("forProvider") or {}).get("manifest")
        if not isinstance(manifest, dict):
            return []
        version = kubernetes_version(world, spec.get("providerConfigRef"))
        try:
            return list(self._validator.check(dict(manifest), version).rejected)
        except (LookupError, ValueError):
            return []


class CrdFiles:
    """CRD files, read a group at a time.

    A file named the way controller-gen and upstream repositories name CRDs,
    `<group>_<plural>.yaml`, is read only for its group; any other file (a
    `kubectl get crds -o yaml` dump) is read the first time any group is needed.
    """

    def __init__(self, paths: Sequence[Path]) -> None:
        self._by_group: dict[str, list[Path]] = {}
        self._other: list[Path] = []
        for path in paths:
            files = sorted(_definition_files(path)) if path.is_dir() else [path]
            for file in files:
                group, sep, _ = file.stem.partition("_")
                if sep and "." in group:
                    self._by_group.setdefault(group, []).append(file)
                else:
                    self._other.append(file)
        self._loaded: set[str] = set()

    def load_group(self, group: str, validator: ManifestValidator) -> None:
        """Add what defines `group` to `validator`'s registry; DefinitionError if unusable."""
        if not group or group in self._loaded:
            return
        files = self._by_group.pop(group, [])
        files.extend(self._other)
        self._other = []
        self._loaded.add(group)
        for file in files:
            validator.registry.merge(_definitions_in(file))


def _definitions_in(file: Path) -> SchemaRegistry:
    """The CRDs of one file. Not kept: a `CrdFiles` reads each of its files at most
    once (a group's files when it is first needed, the others once), and nothing
    outlives the render that owns it."""
    registry = SchemaRegistry()
    for doc in load_documents(file):
        if is_definition(doc):
            registry.add_document(doc)
    return registry


def _definition_files(directory: Path) -> list[Path]:
    return [
        p
        for p in directory.rglob("*")
        if p.is_file() and p.suffix in (".yaml", ".yml", ".json") and not p.name.startswith(".")
    ]


def kubernetes_version(world: World, provider_config_ref: object) -> str:
    """The Kubernetes version of the cluster whose composite composed the ProviderConfig
    (`modelplane.provisioning.kubernetes_version`: a created cluster's published
    `status.kubernetesVersion`, else its sub-block's version, else
    `spec.kubernetesVersion`)."""
    if not isinstance(provider_config_ref, Mapping):
        return DEFAULT_KUBERNETES_VERSION
    name = str(provider_config_ref.get("name", ""))  # pyright: ignore[reportUnknownMemberType]
    kind = str(provider_config_ref.get("kind") or "ProviderConfig")  # pyright: ignore[reportUnknownMemberType]
    for key in world.named(kind, name):
        if not group_of(key.api_version).endswith(".crossplane.io"):
            continue
        config = world.get(key)
        ref = controller_reference(config) if config is not None else None
        owner = world.find_owner(ref, key) if ref is not None else None
        version = _cluster_version(owner) if owner is not None else None
        if version:
            return version
    return DEFAULT_KUBERNETES_VERSION


def _cluster_version(owner: View) -> str | None:
    if owner.get("kind") == INFERENCE_CLUSTER:
        try:
            return provisioned_version(parse_object(InferenceCluster, owner))
        except InvalidInputError:
            pass  # its function reports what does not read; the field as written
    version = (owner.get("spec") or {}).get("kubernetesVersion")
    return version if isinstance(version, str) else None


def server_message(manifest: Mapping[str, Any], problems: Sequence[FieldError]) -> str:
    """The API server's answer to a create of `manifest` with these problems.

    A field the decoder cannot read (a malformed quantity, an unknown field under
    strict validation) fails decoding before validation runs; everything else is
    an Invalid status error listing every field.
    """
    kind = str(manifest.get("kind", ""))
    api_version = str(manifest.get("apiVersion", ""))
    name = str((manifest.get("metadata") or {}).get("name", ""))
    undecodable = (
        f'{kind} in version "{api_version.rpartition("/")[2]}" cannot be handled as a {kind}'
    )
    if any(p.message == QUANTITY_SYNTAX for p in problems):
        return f"{undecodable}: {QUANTITY_SYNTAX}"
    unknown = [p.message for p in problems if p.message.startswith(_UNKNOWN_FIELD)]
    if unknown:
        return f"{undecodable}: strict decoding error: {', '.join(unknown)}"
    group = group_of(api_version)
    qualified = f"{kind}.{group}" if group else kind
    return f'{qualified} "{name}" is invalid: {aggregate(problems)}'


def aggregate(problems: Sequence[FieldError]) -> str:
    """apimachinery's aggregate of field errors: one alone, several in brackets."""
    texts = [str(p) for p in problems]
    return texts[0] if len(texts) == 1 else f"[{', '.join(texts)}]"
