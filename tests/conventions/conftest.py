"""Workload builders and shape fixtures for the convention tests.

Conventioned workloads and gang objects are validated with the root conftest's
`manifest_validator`; pod templates are read with
`modelplane.core.kinds.pod_sites`.
"""

import copy
from collections.abc import Callable
from typing import Any

import pytest

Obj = dict[str, Any]

NAMESPACE = "ml-team"


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


class Builders:
    """The builders as one fixture: build.lws(...), build.shapes[...], ..."""

    namespace = NAMESPACE
    pod_template = staticmethod(pod_template)
    deployment = staticmethod(deployment)
    lws = staticmethod(lws)
    kserve_block = staticmethod(kserve_block)
    llmisvc = staticmethod(llmisvc)
    shapes = SHAPES
    pipeline2 = PIPELINE2
    data4_local2 = DATA4_LOCAL2


@pytest.fixture
def build() -> Builders:
    return Builders()
