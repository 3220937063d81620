"""The APIs the engine serves: XRDs and Pipeline Compositions read from an `apis/` tree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import modelplane_cli
from modelplane_cli import yamlio
from modelplane_cli.render.composition_keys import repeated_keys
from modelplane_cli.render.world import View, group_of

XRD_KIND = "CompositeResourceDefinition"
COMPOSITION_KIND = "Composition"
APIEXTENSIONS_GROUP = "apiextensions.crossplane.io"


class ApiError(Exception):
    """The apis/ tree is unreadable or inconsistent."""


class CompositionSelectionError(Exception):
    """No single Composition can be chosen for a composite."""


@dataclass(frozen=True)
class CompositeType:
    """One XR kind as its XRD defines it."""

    group: str
    kind: str
    plural: str
    namespaced: bool
    served_versions: tuple[str, ...]
    schemas: Mapping[str, Mapping[str, Any]]
    default_composition: str | None
    source: Path
    replicas_paths: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict[str, tuple[str, ...]]
    )
    """Per served version, the scale subresource's `specReplicasPath` as field names:
    what an autoscaler writes, which an apply that leaves it out does not change."""

    def serves(self, api_version: str) -> bool:
        group, _, version = api_version.rpartition("/")
        return group == self.group and version in self.served_versions


@dataclass(frozen=True)
class RequiredResource:
    """A bootstrap requirement declared on a pipeline step."""

    name: str
    api_version: str
    kind: str
    namespace: str | None
    match_name: str | None
    match_labels: Mapping[str, str] | None


@dataclass(frozen=True)
class RequiredSchema:
    name: str
    api_version: str
    kind: str


@dataclass(frozen=True)
class CredentialSource:
    name: str
    secret_namespace: str
    secret_name: str


@dataclass(frozen=True)
class PipelineStep:
    name: str
    function: str
    input: Mapping[str, Any] | None = None
    credentials: tuple[CredentialSource, ...] = ()
    requirements: tuple[RequiredResource, ...] = ()
    schemas: tuple[RequiredSchema, ...] = ()


@dataclass(frozen=True)
class Composition:
    name: str
    labels: Mapping[str, str]
    composite_api_version: str
    composite_kind: str
    steps: tuple[PipelineStep, ...]


@dataclass
class Apis:
    """Every XRD and Composition, indexed for the engine."""

    types: dict[tuple[str, str], CompositeType] = field(default_factory=dict)
    compositions: list[Composition] = field(default_factory=list)

    @property
    def definition_files(self) -> list[Path]:
        return sorted({t.source for t in self.types.values()})

    def composite_type(self, api_version: str, kind: str) -> CompositeType | None:
        """The XR type of (apiVersion, kind) when a Composition exists for it."""
        found = self.types.get((group_of(api_version), kind))
        if found is None or not found.serves(api_version):
            return None
        if not any(
            c.composite_kind == kind and c.composite_api_version == api_version
            for c in self.compositions
        ):
            return None
        return found

    @property
    def groups(self) -> frozenset[str]:
        """Every API group an XRD here defines."""
        return frozenset(group for group, _ in self.types)

    def kinds(self, group: str) -> list[str]:
        return sorted(kind for g, kind in self.types if g == group)

    def served_versions(self, group: str, kind: str) -> tuple[str, ...]:
        found = self.types.get((group, kind))
        return found.served_versions if found is not None else ()

    def is_composite(self, api_version: str, kind: str) -> bool:
        return self.composite_type(api_version, kind) is not None

    def is_namespaced_composite_kind(self, api_version: str, kind: str) -> bool | None:
        """The scope of an XRD-defined kind, or None when no XRD defines it."""
        found = self.types.get((group_of(api_version), kind))
        return None if found is None else found.namespaced

    def replicas_path(self, api_version: str, kind: str) -> tuple[str, ...] | None:
        """The scale subresource's replicas field of a composite kind, if it has one."""
        found = self.composite_type(api_version, kind)
        if found is None:
            return None
        return found.replicas_paths.get(api_version.rpartition("/")[2])

    def schema_for(self, api_version: str, kind: str) -> Mapping[str, Any] | None:
        found = self.types.get((group_of(api_version), kind))
        if found is None:
            return None
        _, _, version = api_version.rpartition("/")
        return found.schemas.get(version)

    def composition_for(self, xr: View) -> Composition:
        """The Composition Crossplane would select for `xr`."""
        api_version = str(xr.get("apiVersion", ""))
        kind = str(xr.get("kind", ""))
        candidates = [
            c
            for c in self.compositions
            if c.composite_kind == kind and c.composite_api_version == api_version
        ]
        spec = xr.get("spec") or {}
        machinery = spec.get("crossplane") or {}
        ref = (machinery.get("compositionRef") or {}).get("name")
        selector = (machinery.get("compositionSelector") or {}).get("matchLabels")
        xr_type = self.composite_type(api_version, kind)
        if ref is None and selector is None and xr_type is not None:
            ref = xr_type.default_composition
        if ref is not None:
            named = [c for c in candidates if c.name == ref]
            if not named:
                raise CompositionSelectionError(
                    f"composition {ref!r} does not exist or does not compose {kind}"
                )
            return named[0]
        if selector is not None:
            candidates = [
                c for c in candidates if all(c.labels.get(k) == v for k, v in selector.items())
            ]
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            # Crossplane's errNoCompatibleComposition (`api.go`).
            raise CompositionSelectionError("no compatible Compositions found")
        names = ", ".join(sorted(c.name for c in candidates))
        raise CompositionSelectionError(
            f"{len(candidates)} compositions match {kind} ({names}); "
            "set spec.crossplane.compositionRef"
        )

    @classmethod
    def load(cls, directory: Path) -> Apis:
        """Read every XRD and Composition under `directory`, recursively."""
        if not directory.is_dir():
            raise ApiError(f"{directory}: not a directory of XRDs and Compositions")
        apis = cls()
        files = sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml"))
        for path in files:
            try:
                docs = yamlio.load_file(path)
            except yamlio.YAMLError as exc:
                raise ApiError(str(exc)) from exc
            for doc in docs:
                if not isinstance(doc, dict) or group_of(str(doc.get("apiVersion", ""))) != (
                    APIEXTENSIONS_GROUP
                ):
                    continue
                if doc.get("kind") == XRD_KIND:
                    apis._add_type(_parse_xrd(doc, path))
                elif doc.get("kind") == COMPOSITION_KIND:
                    apis.compositions.append(_parse_composition(doc, path))
        apis.compositions.sort(key=lambda c: c.name)
        for composition in apis.compositions:
            key = (group_of(composition.composite_api_version), composition.composite_kind)
            if key not in apis.types:
                raise ApiError(
                    f"composition {composition.name!r} composes {composition.composite_kind}, "
                    "which no XRD defines"
                )
        return apis

    def _add_type(self, xr_type: CompositeType) -> None:
        key = (xr_type.group, xr_type.kind)
        if key in self.types:
            raise ApiError(f"{xr_type.source}: {xr_type.kind}.{xr_type.group} is defined twice")
        self.types[key] = xr_type


def default_apis_dir() -> Path:
    """The XRDs and Compositions this CLI renders.

    Run from a source checkout, the checkout's `apis/`, so an edit there counts at
    once; installed (pip, uv tool), the copy the package ships (`make generate`
    keeps it identical to `apis/`). Never a directory found from the working
    directory: a fleet repository may hold an unrelated `apis/`.
    """
    package = Path(modelplane_cli.__file__).resolve().parent
    if package.parent.name == "src" and package.parents[1].name == "cli":
        checkout = package.parents[2] / "apis"
        if checkout.is_dir():
            return checkout
    return package / "apis"


# What a field must be, in the words an error uses.
_EXPECTED: dict[type, str] = {str: "a string", dict: "an object", list: "a list"}


def _lookup(doc: Mapping[str, Any], path: Path, keys: Sequence[str], expected: type) -> Any:
    """The value at `keys`, None when absent or empty; ApiError when it has the wrong type."""
    value: Any = doc
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    if value is None or value == "":
        return None
    if not isinstance(value, expected):
        raise ApiError(f"{path}: {'.'.join(keys)} must be {_EXPECTED[expected]}")
    return value


def _require(doc: Mapping[str, Any], path: Path, *keys: str) -> str:
    value = _lookup(doc, path, keys, str)
    if value is None:
        raise ApiError(f"{path}: {'.'.join(keys)} is required")
    return value


def _optional(doc: Mapping[str, Any], path: Path, *keys: str) -> str | None:
    return _lookup(doc, path, keys, str)


def _object(doc: Mapping[str, Any], path: Path, *keys: str) -> Mapping[str, Any]:
    return _lookup(doc, path, keys, dict) or {}


def _objects(doc: Mapping[str, Any], path: Path, *keys: str) -> list[Mapping[str, Any]]:
    items: list[Any] = _lookup(doc, path, keys, list) or []
    if not all(isinstance(item, Mapping) for item in items):
        raise ApiError(f"{path}: {'.'.join(keys)} must be a list of objects")
    return items


def _string_map(doc: Mapping[str, Any], path: Path, *keys: str) -> dict[str, str] | None:
    found = _lookup(doc, path, keys, dict)
    if found is None:
        return None
    if not all(isinstance(v, str) for v in found.values()):
        raise ApiError(f"{path}: {'.'.join(keys)} must be a map of strings")
    return {str(k): v for k, v in found.items()}


def _parse_xrd(doc: Mapping[str, Any], path: Path) -> CompositeType:
    versions = _objects(doc, path, "spec", "versions")
    named = [(v, _optional(v, path, "name")) for v in versions]
    served = tuple(name for v, name in named if name and v.get("served", True))
    schemas = {name: _object(v, path, "schema", "openAPIV3Schema") for v, name in named if name}
    scope = _optional(doc, path, "spec", "scope") or "Namespaced"
    if scope not in ("Namespaced", "Cluster"):
        raise ApiError(f"{path}: spec.scope must be Namespaced or Cluster, not {scope!r}")
    return CompositeType(
        group=_require(doc, path, "spec", "group"),
        kind=_require(doc, path, "spec", "names", "kind"),
        plural=_require(doc, path, "spec", "names", "plural"),
        namespaced=scope == "Namespaced",
        served_versions=served,
        schemas=schemas,
        default_composition=_optional(doc, path, "spec", "defaultCompositionRef", "name"),
        source=path,
        replicas_paths={
            name: tuple(part for part in replicas.split(".") if part)
            for v, name in named
            if name
            and (replicas := _optional(v, path, "subresources", "scale", "specReplicasPath"))
        },
    )


def _parse_composition(doc: Mapping[str, Any], path: Path) -> Composition:
    name = _require(doc, path, "metadata", "name")
    mode = _optional(doc, path, "spec", "mode") or "Pipeline"
    if mode != "Pipeline":
        raise ApiError(
            f"{path}: composition {name!r} has mode {mode!r}; only Pipeline is supported"
        )
    pipeline = _objects(doc, path, "spec", "pipeline")
    if not pipeline:
        raise ApiError(f"{path}: spec.pipeline is required")
    steps = tuple(_parse_step(step, path) for step in pipeline)
    if repeats := repeated_keys(doc):
        raise ApiError(f"{path}: composition {name!r} is invalid: {'; '.join(repeats)}")
    return Composition(
        name=name,
        labels=_string_map(doc, path, "metadata", "labels") or {},
        composite_api_version=_require(doc, path, "spec", "compositeTypeRef", "apiVersion"),
        composite_kind=_require(doc, path, "spec", "compositeTypeRef", "kind"),
        steps=steps,
    )


def _parse_step(step: Mapping[str, Any], path: Path) -> PipelineStep:
    credentials = tuple(_parse_credential(c, path) for c in _objects(step, path, "credentials"))
    requirements = tuple(
        RequiredResource(
            name=_require(r, path, "requirementName"),
            api_version=_require(r, path, "apiVersion"),
            kind=_require(r, path, "kind"),
            namespace=_optional(r, path, "namespace"),
            match_name=_optional(r, path, "name"),
            match_labels=_string_map(r, path, "matchLabels"),
        )
        for r in _objects(step, path, "requirements", "requiredResources")
    )
    schemas = tuple(
        RequiredSchema(
            _require(r, path, "requirementName"),
            _require(r, path, "apiVersion"),
            _require(r, path, "kind"),
        )
        for r in _objects(step, path, "requirements", "requiredSchemas")
    )
    step_input = step.get("input")
    if step_input is not None and not isinstance(step_input, Mapping):
        raise ApiError(f"{path}: the input of step {step.get('step')!r} must be an object")
    return PipelineStep(
        name=_require(step, path, "step"),
        function=_require(step, path, "functionRef", "name"),
        input=step_input,
        credentials=credentials,
        requirements=requirements,
        schemas=schemas,
    )


def _parse_credential(credential: Mapping[str, Any], path: Path) -> CredentialSource:
    """A step's credential, refused as v2.3's Composition CRD refuses it.

    Crossplane's Compose skips a credential whose source is not Secret or that has
    no secretRef, but none reaches it: the CRD's CEL rule (`self.source == 'Secret'
    && has(self.secretRef)`) holds only for a Secret with a secretRef, so the API
    server refuses every other Composition, `source: None` included.
    """
    name = _require(credential, path, "name")
    source = _require(credential, path, "source")
    if source not in ("None", "Secret"):
        raise ApiError(
            f"{path}: credential {name!r}: source must be None or Secret, not {source!r}"
        )
    if source != "Secret" or credential.get("secretRef") is None:
        # The CRD rule's own message.
        raise ApiError(f"{path}: credential {name!r}: the Secret source requires a secretRef")
    return CredentialSource(
        name=name,
        secret_namespace=_require(credential, path, "secretRef", "namespace"),
        secret_name=_require(credential, path, "secretRef", "name"),
    )
