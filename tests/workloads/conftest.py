"""Builders for ModelReplica / InferenceCluster inputs and a validator for outputs.

Rendered built-in kinds are validated with kubernetes_validate (strict, for the
cluster's minor version). CRD kinds are validated with `modelplane.schema` when
it offers `SchemaRegistry`, and otherwise with jsonschema over the CRD's
openAPIV3Schema, made strict about unknown fields the way the API server prunes
them. Pod templates embedded in CRDs are also validated as core/v1 Pods.
"""

import copy
import importlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

import jsonschema
import kubernetes_validate
import pytest
import yaml

Obj = dict[str, Any]

CRD_FILES = {
    (
        "leaderworkerset.x-k8s.io/v1",
        "LeaderWorkerSet",
    ): "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    (
        "serving.kserve.io/v1alpha2",
        "LLMInferenceService",
    ): "serving.kserve.io_llminferenceservices.yaml",
}


def _crd_dir() -> Path | None:
    here = Path(__file__).resolve()
    for candidate in (here.parents[3] / "shared" / "crds", here.parents[2] / "crds"):
        if (candidate / CRD_FILES[("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")]).exists():
            return candidate
    return None


def engine(**extra: Any) -> Obj:
    container: Obj = {
        "name": "engine",
        "image": "vllm/vllm-openai:v0.7.3",
        "args": ["--model=Qwen/Qwen2.5-0.5B-Instruct"],
    }
    container.update(extra)
    return container


def role(
    *,
    count: int = 1,
    topology: Mapping[str, int] | None = None,
    pool: str = "h100",
    requests: list[Obj] | None = None,
    template: Obj | None = None,
) -> Obj:
    return {
        "count": count,
        "topology": dict(topology or {"tensor": 1}),
        "nodePoolName": pool,
        "deviceRequests": copy.deepcopy(
            requests
            if requests is not None
            else [
                {
                    "name": "gpu",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 8,
                    "selectors": [{"cel": 'device.driver == "gpu.nvidia.com"'}],
                }
            ]
        ),
        "template": copy.deepcopy(
            template
            if template is not None
            else {"metadata": {"labels": {"app": "kimi"}}, "spec": {"containers": [engine()]}}
        ),
    }


def replica(
    *,
    name: str = "kimi-k2-5ab63",
    namespace: str = "ml-team-prod",
    deployment: str = "kimi-k2",
    cluster: str = "prod-us-east",
    workers: Obj | None = None,
    decode: Obj | None = None,
    prefill: Obj | None = None,
) -> Obj:
    spec: Obj = {
        "deploymentName": deployment,
        "clusterName": cluster,
        "index": 0,
        "priority": "production-critical",
    }
    if decode is None and prefill is None:
        spec["workers"] = workers if workers is not None else role()
    else:
        spec["decode"], spec["prefill"] = decode, prefill
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": namespace, "labels": {"x": "y"}},
        "spec": spec,
    }


def cluster(
    *,
    backend: str | None = "Native",
    pools: tuple[str, ...] = ("h100", "l4"),
    name: str = "prod-us-east",
    version: str | None = None,
) -> Obj:
    spec: Obj = {"nodePools": [{"name": p, "className": "c", "nodeCount": 4} for p in pools]}
    if backend is not None:
        spec["backend"] = {"type": backend}
    obj: Obj = {"metadata": {"name": name}, "spec": spec}
    if version is not None:
        obj["status"] = {"kubernetesVersion": version}
    return obj


class Builders:
    """The builders as one fixture: build.replica(...), build.role(...), ..."""

    engine = staticmethod(engine)
    role = staticmethod(role)
    replica = staticmethod(replica)
    cluster = staticmethod(cluster)


@pytest.fixture(scope="session")
def build() -> Builders:
    return Builders()


def _strict(schema: Any) -> Any:
    """The schema with unknown fields rejected wherever the API server would prune them."""
    if isinstance(schema, list):
        return [_strict(s) for s in cast(list[Any], schema)]
    if not isinstance(schema, dict):
        return schema
    node = {k: _strict(v) for k, v in cast(dict[str, Any], schema).items()}
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        node["additionalProperties"] = False
    return node


class Validator:
    def __init__(self, crd_dir: Path) -> None:
        self.crd_dir = crd_dir
        self.path = "jsonschema"
        self._registry = self._schema_registry()
        self._json: dict[tuple[str, str], Any] = {}

    def _schema_registry(self) -> Any:
        try:
            module = importlib.import_module("modelplane.schema")
        except ImportError:
            return None
        registry = getattr(module, "SchemaRegistry", None)
        if registry is None:
            return None
        self.path = "modelplane.schema"
        return registry.from_files([self.crd_dir / f for f in sorted(set(CRD_FILES.values()))])

    def _crd_schema(self, api_version: str, kind: str) -> Any:
        key = (api_version, kind)
        if key not in self._json:
            crd = yaml.safe_load((self.crd_dir / CRD_FILES[key]).read_text())
            version = api_version.split("/")[1]
            served = [v for v in crd["spec"]["versions"] if v["name"] == version]
            assert served and served[0]["served"], f"{api_version} {kind} is not served"
            self._json[key] = _strict(served[0]["schema"]["openAPIV3Schema"])
        return self._json[key]

    def _crd(self, obj: Obj) -> list[str]:
        api_version, kind = obj["apiVersion"], obj["kind"]
        if self._registry is not None:
            schema = self._registry.get(api_version, kind)
            return [str(e) for e in schema.validate(obj)]
        validator = jsonschema.Draft7Validator(self._crd_schema(api_version, kind))
        return [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(obj)]

    def __call__(self, obj: Obj, version: str = "1.34") -> None:
        key = (obj["apiVersion"], obj["kind"])
        if key in CRD_FILES:
            problems = self._crd(obj)
            assert not problems, f"{obj['kind']} {obj['metadata']['name']}: {problems}"
            for where, labels, pod_spec in embedded_pods(obj):
                pod = {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": "p", "namespace": "n", "labels": labels},
                    "spec": pod_spec,
                }
                try:
                    kubernetes_validate.validate(pod, version, strict=True)
                except kubernetes_validate.ValidationError as error:
                    raise AssertionError(f"{where}: {error.message}") from error
            return
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            raise AssertionError(f"{obj['kind']}: {error.message} at {list(error.path)}") from error


def embedded_pods(obj: Obj) -> Iterator[tuple[str, dict[str, str], Obj]]:
    """Every pod spec a workload manifest holds, with the labels its pods get."""
    spec = obj["spec"]
    if obj["kind"] == "Deployment":
        yield "spec.template", spec["template"]["metadata"]["labels"], spec["template"]["spec"]
    elif obj["kind"] == "LeaderWorkerSet":
        lwt = spec["leaderWorkerTemplate"]
        for key in ("leaderTemplate", "workerTemplate"):
            yield key, lwt[key]["metadata"]["labels"], lwt[key]["spec"]
    elif obj["kind"] == "LLMInferenceService":
        for prefix, block in (("spec", spec), ("spec.prefill", spec.get("prefill"))):
            if block is None:
                continue
            for key in ("template", "worker"):
                if key in block:
                    yield f"{prefix}.{key}", block["labels"], block[key]


@pytest.fixture(scope="session")
def validate() -> Callable[..., None]:
    crd_dir = _crd_dir()
    if crd_dir is None:
        pytest.skip("the upstream CRDs (shared/crds) are not beside this checkout")
    return Validator(crd_dir)
