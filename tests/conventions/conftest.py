"""Workload builders, a pod-site reader and a schema validator for the convention tests.

Gang objects and conventioned workloads are validated against the upstream CRDs
in shared/crds: with `modelplane.schema.SchemaRegistry` when that package offers
it, otherwise with jsonschema over the CRD's openAPIV3Schema, made to reject
unknown fields wherever the API server would prune them. Deployments are
validated with kubernetes_validate.
"""

import copy
import importlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import jsonschema
import kubernetes_validate
import pytest
import yaml

Obj = dict[str, Any]

NAMESPACE = "ml-team"

CRD_FILES = {
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): "scheduling.x-k8s.io_podgroups.yaml",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "scheduling.volcano.sh_podgroups.yaml",
    ("scheduling.run.ai/v2alpha2", "PodGroup"): "scheduling.run.ai_podgroups.yaml",
    (
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
    ): "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    (
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
    ): "serving.kserve.io_llminferenceservices.yaml",
}


def pod_template(
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> Obj:
    metadata: Obj = {"labels": {"app": "kimi", **(labels or {})}}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "metadata": metadata,
        "spec": {"containers": [{"name": "engine", "image": "vllm/vllm-openai:v0.7.3"}], **spec},
    }


def _meta(name: str, role: str) -> Obj:
    return {
        "name": name,
        "namespace": NAMESPACE,
        "labels": {"modelplane.ai/replica": "kimi-0", "modelplane.ai/role": role},
    }


def deployment(
    name: str = "kimi-0-workers",
    role: str = "workers",
    replicas: int = 2,
    template: Obj | None = None,
) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(name, role),
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "kimi"}},
            "template": copy.deepcopy(template) if template else pod_template(),
        },
    }


def lws(
    name: str = "kimi-0-workers",
    role: str = "workers",
    size: int = 2,
    replicas: int = 1,
    leader: bool = True,
    startup: str | None = None,
    template: Obj | None = None,
) -> Obj:
    lwt: Obj = {
        "size": size,
        "workerTemplate": copy.deepcopy(template) if template else pod_template(),
    }
    if leader:
        lwt["leaderTemplate"] = copy.deepcopy(template) if template else pod_template()
    spec: Obj = {"replicas": replicas, "leaderWorkerTemplate": lwt}
    if startup:
        spec["startupPolicy"] = startup
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": _meta(name, role),
        "spec": spec,
    }


def kserve_block(
    *,
    worker: bool,
    parallelism: dict[str, int] | None = None,
    replicas: int = 1,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    pod: dict[str, Any] | None = None,
) -> Obj:
    block: Obj = {
        "replicas": replicas,
        "parallelism": dict(parallelism or {"tensor": 8}),
        "labels": {"app": "kimi", **(labels or {})},
        "template": {"containers": [{"name": "main", "image": "vllm/vllm-openai:v0.7.3"}]},
    }
    block["template"].update(pod or {})
    if annotations:
        block["annotations"] = dict(annotations)
    if worker:
        block["worker"] = copy.deepcopy(block["template"])
    return block


def llmisvc(
    name: str = "kimi-0",
    role: str = "workers",
    main: Obj | None = None,
    prefill: Obj | None = None,
) -> Obj:
    spec = copy.deepcopy(main) if main else kserve_block(worker=False)
    if prefill is not None:
        spec["prefill"] = copy.deepcopy(prefill)
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": _meta(name, role),
        "spec": spec,
    }


PIPELINE2 = {"tensor": 8, "pipeline": 2}
DATA4_LOCAL2 = {"tensor": 4, "data": 4, "dataLocal": 2}

# name -> (manifests, number of multi-pod units, pods of each multi-pod gang)
SHAPES: dict[str, Callable[[], tuple[list[Obj], list[int]]]] = {
    "deployment-unified": lambda: ([deployment()], []),
    "deployment-disaggregated": lambda: (
        [deployment("kimi-0-decode", "decode"), deployment("kimi-0-prefill", "prefill")],
        [],
    ),
    "lws-unified": lambda: ([lws(size=2)], [2]),
    "lws-disaggregated": lambda: (
        [lws("kimi-0-decode", "decode", size=2), lws("kimi-0-prefill", "prefill", size=4)],
        [2, 4],
    ),
    "lws-disaggregated-mixed": lambda: (
        [lws("kimi-0-decode", "decode", size=2), deployment("kimi-0-prefill", "prefill")],
        [2],
    ),
    "llmisvc-unified-single": lambda: ([llmisvc()], []),
    "llmisvc-unified-multi": lambda: (
        [llmisvc(main=kserve_block(worker=True, parallelism=PIPELINE2))],
        [2],
    ),
    "llmisvc-disaggregated": lambda: (
        [
            llmisvc(
                role="decode",
                main=kserve_block(worker=True, parallelism=PIPELINE2),
                prefill=kserve_block(worker=True, parallelism=DATA4_LOCAL2),
            )
        ],
        [2, 2],
    ),
    "llmisvc-disaggregated-mixed": lambda: (
        [
            llmisvc(
                role="decode",
                main=kserve_block(worker=True, parallelism=PIPELINE2),
                prefill=kserve_block(worker=False, replicas=3),
            )
        ],
        [2],
    ),
}


def pod_sites(obj: Obj) -> Iterator[tuple[str, Obj, list[Obj]]]:
    """(where, metadata holding labels/annotations, pod specs) for each pod template."""
    spec = obj["spec"]
    if obj["kind"] == "Deployment":
        yield "spec.template", spec["template"]["metadata"], [spec["template"]["spec"]]
    elif obj["kind"] == "LeaderWorkerSet":
        lwt = spec["leaderWorkerTemplate"]
        for key in ("leaderTemplate", "workerTemplate"):
            if key in lwt:
                yield key, lwt[key]["metadata"], [lwt[key]["spec"]]
    else:
        for where, block in (("spec", spec), ("spec.prefill", spec.get("prefill"))):
            if block is not None:
                yield where, block, [block[k] for k in ("template", "worker") if k in block]


def _crd_dir() -> Path | None:
    here = Path(__file__).resolve()
    for candidate in (here.parents[3] / "shared" / "crds", here.parents[2] / "crds"):
        if (candidate / "scheduling.x-k8s.io_podgroups.yaml").exists():
            return candidate
    return None


def _closed(schema: Any) -> Any:
    """Reject unknown fields where the API server would prune them."""
    if isinstance(schema, list):
        return [_closed(item) for item in cast(list[Any], schema)]
    if not isinstance(schema, dict):
        return schema
    out = {key: _closed(value) for key, value in cast(dict[str, Any], schema).items()}
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


class SchemaCheck:
    def __init__(self, crd_dir: Path) -> None:
        self.crd_dir = crd_dir
        self._compiled: dict[tuple[str, str], Any] = {}
        self.registry = self._registry()

    def _registry(self) -> Any:
        try:
            module = importlib.import_module("modelplane.schema")
        except ImportError:
            return None
        registry = getattr(module, "SchemaRegistry", None)
        if registry is None:
            return None
        return registry.from_files([self.crd_dir / name for name in sorted(CRD_FILES.values())])

    def _jsonschema(self, key: tuple[str, str]) -> Any:
        if key not in self._compiled:
            crd = yaml.safe_load((self.crd_dir / CRD_FILES[key]).read_text())
            version = key[0].split("/")[1]
            (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
            self._compiled[key] = jsonschema.Draft7Validator(
                _closed(served["schema"]["openAPIV3Schema"])
            )
        return self._compiled[key]

    def problems(self, obj: Obj) -> list[str]:
        key = (obj["apiVersion"], obj["kind"])
        if key not in CRD_FILES:
            try:
                kubernetes_validate.validate(obj, "1.34", strict=True)
            except kubernetes_validate.ValidationError as error:
                return [f"{list(error.path)}: {error.message}"]
            return []
        if self.registry is not None:
            return [str(e) for e in self.registry.get(*key).validate(obj)]
        return [
            f"{'.'.join(map(str, e.path))}: {e.message}"
            for e in self._jsonschema(key).iter_errors(obj)
        ]

    def __call__(self, obj: Obj) -> None:
        problems = self.problems(obj)
        assert not problems, f"{obj['kind']} {obj['metadata'].get('name')}: {problems}"


@pytest.fixture(scope="session")
def schema_check() -> SchemaCheck:
    crd_dir = _crd_dir()
    if crd_dir is None:
        pytest.skip("the upstream CRDs (shared/crds) are not beside this checkout")
    return SchemaCheck(crd_dir)


class Builders:
    """The builders as one fixture, since test modules cannot import conftest."""

    namespace = NAMESPACE
    pod_template = staticmethod(pod_template)
    deployment = staticmethod(deployment)
    lws = staticmethod(lws)
    kserve_block = staticmethod(kserve_block)
    llmisvc = staticmethod(llmisvc)
    pod_sites = staticmethod(pod_sites)
    shapes = SHAPES
    pipeline2 = PIPELINE2
    data4_local2 = DATA4_LOCAL2


@pytest.fixture
def build() -> Builders:
    return Builders()
