"""install/rbac grants Crossplane exactly what the functions require and it cannot read.

Crossplane fetches a function's required resources with its own service account,
so every kind a function requires must be readable by Crossplane's ClusterRole.
The kinds are derived from the code: every call that asks Crossplane for a
resource, found in the functions' source and evaluated, and confirmed by what the
functions ask for while the examples render.
"""

import ast
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane_cli.packages import FUNCTION_DIRECTORIES, FUNCTION_NAMES
from modelplane_cli.render import (
    Apis,
    FunctionRegistry,
    SchemaAdmission,
    default_apis_dir,
    read_documents,
    render,
)
from modelplane_cli.render.runners import Runner
from modelplane_cli.schema import ManifestValidator
from modelplane_cli.schema.upstream import PINS_FILE, read_pins, reference_crd_directory

from . import upjet
from .yaml_files import document

pytestmark = pytest.mark.needs_crds
ROOT = Path(__file__).resolve().parents[2]
CLUSTER_ROLE = ROOT / "install" / "rbac" / "required-resources.yaml"
AGGREGATE = "rbac.crossplane.io/aggregate-to-crossplane"
READ = frozenset({"get", "list", "watch"})
# The helpers that ask Crossplane for resources (modelplane.xfn.required) and the
# SDK call under them: (api_version, kind) are their third and fourth arguments.
REQUIRING = frozenset({"require_named", "require_all", "require_labelled", "require_resources"})
# Resource names of the built-in kinds a function may require. A new one fails
# `test_every_required_kind_has_a_resource_name` until it is added here.
BUILTIN_RESOURCES = {("scheduling.k8s.io", "PriorityClass"): "priorityclasses"}


@dataclass(frozen=True)
class Rule:
    groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]

    def grants(self, group: str, resource: str, verbs: frozenset[str]) -> bool:
        return (
            bool(self.groups & {group, "*"})
            and bool(self.resources & {resource, "*"})
            and ("*" in self.verbs or verbs <= self.verbs)
        )


def rule(groups: list[str], resources: list[str], verbs: list[str]) -> Rule:
    return Rule(frozenset(groups), frozenset(resources), frozenset(verbs))


# Crossplane v2.3.4's own ClusterRole, cluster/charts/crossplane/templates/clusterrole.yaml
# (the rules of `crossplane:system:aggregate-to-crossplane`).
CROSSPLANE_CHART_RULES = (
    rule([""], ["events"], ["create", "update", "patch", "delete"]),
    rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], ["*"]),
    rule([""], ["secrets"], ["get", "list", "watch", "create", "update", "patch", "delete"]),
    rule([""], ["serviceaccounts", "services"], ["*"]),
    rule(
        [
            "apiextensions.crossplane.io",
            "ops.crossplane.io",
            "pkg.crossplane.io",
            "protection.crossplane.io",
        ],
        ["*"],
        ["*"],
    ),
    rule(
        ["extensions", "apps"],
        ["deployments"],
        ["get", "list", "create", "update", "patch", "delete", "watch"],
    ),
    rule(
        ["", "coordination.k8s.io"],
        ["configmaps", "leases"],
        ["get", "list", "create", "update", "patch", "watch", "delete"],
    ),
)


def crossplane_rules() -> list[Rule]:
    """Everything Crossplane's role holds once Modelplane is installed: the chart's
    rules; for each XRD, all verbs on its kind (the RBAC manager's
    `crossplane:composite:<xrd>:aggregate-to-crossplane`, crossplane v2.3.4
    internal/controller/rbac/definition/roles.go); for each provider, all verbs on
    every group its CRDs define (`crossplane:provider:<rev>:aggregate-to-edit`,
    internal/controller/rbac/provider/roles/roles.go) — provider-kubernetes,
    provider-helm and the upjet family packages (`provider_groups`)."""
    rules = list(CROSSPLANE_CHART_RULES)
    for definition in sorted((ROOT / "apis").glob("*/definition.yaml")):
        spec = document(definition)["spec"]
        rules.append(rule([spec["group"]], [spec["names"]["plural"]], ["*"]))
    rules.append(rule(sorted(provider_groups()), ["*"], ["*"]))
    return rules


def provider_groups() -> set[str]:
    """The API groups of the providers the Configuration installs: the groups of
    their CRDs pinned in upstream-crds.yaml (`<group>_<plural>.yaml`), found by the
    provider's repository in the pin's URL or, for an upjet family, by the package
    that serves the group (with the family's config package each service package
    depends on)."""
    configuration = document(ROOT / "package" / "crossplane.yaml")
    names = [
        d["package"].rsplit("/", 1)[1]
        for d in configuration["spec"]["dependsOn"]
        if d["kind"] == "Provider"
    ]
    installed = {n for name in names for n in upjet.installed_with(name)}
    groups = {
        group
        for pin in read_pins(ROOT / PINS_FILE)
        for group in [pin.file.split("_", 1)[0]]
        if any(f"/{name}/" in pin.url for name in names) or upjet.package_of(group) in installed
    }
    assert groups >= {"kubernetes.m.crossplane.io", "helm.m.crossplane.io", "gcp.m.upbound.io"}
    return groups


def _requiring_calls(tree: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in REQUIRING:
                yield node


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[index]


def requested_in_source() -> dict[tuple[str, str], list[str]]:
    """(apiVersion, kind) of every requirement the functions' source can make, with
    where: each call's arguments evaluated in its module's namespace."""
    found: dict[tuple[str, str], list[str]] = {}
    for directory in FUNCTION_DIRECTORIES:
        package = directory.replace("-", "_")
        source = ROOT / "functions" / directory / "src" / package
        for path in sorted(source.rglob("*.py")):
            module = importlib.import_module(
                ".".join((package, *path.relative_to(source).with_suffix("").parts))
            )
            tree = ast.parse(path.read_text())
            for call in _requiring_calls(tree):
                where = f"{path.relative_to(ROOT)}:{call.lineno}"
                namespace = dict(vars(module))
                values = [
                    eval(compile(ast.Expression(_argument(call, i, k)), where, "eval"), namespace)
                    for i, k in ((2, "api_version"), (3, "kind"))
                ]
                assert all(isinstance(v, str) for v in values), where
                found.setdefault((values[0], values[1]), []).append(where)
    return found


def requested_by_compositions() -> set[tuple[str, str]]:
    """Required resources a Composition's pipeline step declares itself."""
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "apis").glob("*/composition.yaml")):
        for step in document(path)["spec"]["pipeline"]:
            requirements = step.get("requirements", {})
            for selector in requirements.get("requiredResources", []):
                found.add((selector["apiVersion"], selector["kind"]))
    return found


class _Responses:
    """A runner that keeps every response's requirements."""

    def __init__(self, inner: Runner, seen: set[tuple[str, str]]) -> None:
        self._inner = inner
        self._seen = seen

    async def RunFunction(
        self, request: fnv1.RunFunctionRequest, context: Any, /
    ) -> fnv1.RunFunctionResponse:
        response = await self._inner.RunFunction(request, context)
        for selector in response.requirements.resources.values():
            self._seen.add((selector.api_version, selector.kind))
        return response


def requested_while_rendering(*fleets: tuple[str, ...]) -> set[tuple[str, str]]:
    seen: set[tuple[str, str]] = set()
    apis = Apis.load(default_apis_dir())
    real = FunctionRegistry()
    for fleet in fleets:
        runners = {name: _Responses(real.runner(name), seen) for name in FUNCTION_NAMES}
        documents = read_documents([str(ROOT / "examples" / part) for part in fleet])
        admission = SchemaAdmission.from_files(apis.definition_files)
        result = render(
            documents, apis, FunctionRegistry(dict(runners)), admission, in_process=True
        )
        assert result.ok, result.errors
    return seen


def resource_of(api_version: str, kind: str) -> tuple[str, str]:
    """The (group, resource) RBAC names a kind by: from its XRD, its upstream CRD, or
    the built-in table."""
    group = api_version.rpartition("/")[0]
    crds = reference_crd_directory()
    assert crds is not None
    definitions = [*(ROOT / "apis").glob("*/definition.yaml"), *crds.glob(f"{group}_*.yaml")]
    for definition in definitions:
        spec = document(definition)["spec"]
        if spec["group"] == group and spec["names"]["kind"] == kind:
            return group, spec["names"]["plural"]
    return group, BUILTIN_RESOURCES[(group, kind)]


@pytest.fixture(scope="module")
def required() -> set[tuple[str, str]]:
    in_source = requested_in_source()
    assert in_source, "no requirement found in the functions' source"
    return set(in_source) | requested_by_compositions()


def test_rendering_asks_for_nothing_the_source_scan_missed(
    required: set[tuple[str, str]],
) -> None:
    rendered = requested_while_rendering(("catalog", "fleet"), ("catalog", "serving"))
    assert rendered <= required
    # The scan is confirmed by the examples: every kind they exercise was found.
    assert ("scheduling.k8s.io/v1", "PriorityClass") in rendered


def test_the_runtime_asks_only_through_the_helpers_the_scan_reads() -> None:
    calls = [
        f"{path.relative_to(ROOT)}:{call.lineno}"
        for path in sorted((ROOT / "src" / "modelplane").rglob("*.py"))
        for call in _requiring_calls(ast.parse(path.read_text()))
    ]
    assert all(c.startswith("src/modelplane/xfn/required.py:") for c in calls), calls


def test_every_required_kind_has_a_resource_name(required: set[tuple[str, str]]) -> None:
    for api_version, kind in required:
        resource_of(api_version, kind)


def cluster_role() -> dict[str, Any]:
    return cast(dict[str, Any], document(CLUSTER_ROLE))


def test_the_cluster_role_grants_exactly_what_crossplane_lacks(
    required: set[tuple[str, str]],
) -> None:
    crossplane = crossplane_rules()
    lacking = {
        resource_of(*kind)
        for kind in required
        if not any(r.grants(*resource_of(*kind), READ) for r in crossplane)
    }
    role = cluster_role()
    assert role["metadata"]["labels"] == {AGGREGATE: "true"}
    granted: set[tuple[str, str]] = set()
    for entry in role["rules"]:
        assert set(entry) == {"apiGroups", "resources", "verbs"}
        assert set(entry["verbs"]) == READ
        granted |= {(g, r) for g in entry["apiGroups"] for r in entry["resources"]}
    assert granted == lacking
    assert ("scheduling.k8s.io", "priorityclasses") in lacking


def test_the_cluster_role_is_a_valid_cluster_role(manifest_validator: ManifestValidator) -> None:
    assert manifest_validator.validate(cluster_role()) == []
