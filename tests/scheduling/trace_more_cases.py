"""Match-trace cases of `test_trace` beyond its main table: yielding and preemption, CEL
budgets, model caches, spread, and a backend's requirement."""

from modelplane.cel import CostBudget
from modelplane.scheduling import CacheView, Rejection

from .builders import (
    HOPPER,
    cluster,
    deployment,
    h100,
    replica,
    request,
    role,
)
from .trace_cases import Case

MORE_CASES: list[Case] = []

MORE_CASES.append(
    Case(
        "a replica that is not serving yields to a higher-priority one",
        deployment(1, priority="batch"),
        [cluster("a", h100(nodes=1))],
        [
            ("a", None, None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", None, Rejection.YIELDED),
        ],
        "not serving yet and yielded its place to replica hi-a-0 of ModelDeployment hi: it has "
        "higher priority (critical 1000 > batch 10)",
        existing=[
            replica("a", 0, priority="batch"),
            replica("a", 0, deployment_name="hi", priority="critical"),
        ],
    )
)


MORE_CASES.append(
    Case(
        "the decision's CEL budget runs out",
        deployment(1, request("gpu", 8, "arch == Hopper", "capacity.memory >= 80")),
        [cluster("a", h100()), cluster("b", h100(name="big"))],
        [("a", "h100", None, Rejection.CEL_BUDGET_EXCEEDED)],
        "the scheduling decision's CEL budget of 1 cost unit ran out evaluating "
        "selector 'capacity.memory >= 80' of request 'gpu' on device gpu, cluster a pool h100: "
        "the decision stopped there",
        budget=lambda: CostBudget(1),
    )
)
MORE_CASES.append(
    Case(
        "a disaggregated decision's CEL budget runs out",
        deployment(1, decode=role(HOPPER), prefill=role(HOPPER)),
        [cluster("a", h100())],
        [("a", "h100", "decode", Rejection.CEL_BUDGET_EXCEEDED)],
        "the scheduling decision's CEL budget of 0 cost units ran out evaluating "
        "selector 'arch == Hopper' of request 'gpu' (decode) on device gpu, cluster a pool h100",
        budget=lambda: CostBudget(0),
    )
)

MORE_CASES.append(
    Case(
        "a cluster that holds no model caches, for a deployment with a cacheRef",
        deployment(1, request("gpu", 8, "arch == Hopper")),
        [cluster("a", h100()), cluster("b", h100())],
        [("a", None, None, Rejection.NO_MODEL_CACHE_STORAGE)],
        "holds no model caches",
        cache=CacheView("kimi", unable={"a": "declares no storage, so it holds no model caches"}),
    )
)
MORE_CASES.append(
    Case(
        "a cluster passed over because the model cache is Ready elsewhere",
        deployment(1, request("gpu", 8, "arch == Hopper")),
        [cluster("a", h100()), cluster("b", h100())],
        [("a", None, None, Rejection.MODEL_CACHE_NOT_READY)],
        "model cache kimi is not Ready here; replicas go where it is (b)",
        cache=CacheView("kimi", ready=frozenset({"b"})),
    )
)

MORE_CASES.append(
    Case(
        "a DoNotSchedule spread constraint keeps a cluster with room out",
        deployment(
            2,
            spread=[{"topologyKey": "region", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}],
        ),
        [cluster("a", h100(1), labels={"region": "eu"}), cluster("b", h100(4))],
        [
            ("a", None, None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", None, Rejection.INSUFFICIENT_CAPACITY),
            ("b", None, None, Rejection.SPREAD_CONSTRAINT),
        ],
        "it has no label region, which the DoNotSchedule spread constraint on it needs",
    )
)

MORE_CASES.append(
    Case(
        "a KServe cluster cannot run a deployment without spec.model.uri",
        deployment(1),
        [cluster("a", h100(), backend="KServe"), cluster("b", h100())],
        [("a", None, None, Rejection.BACKEND_UNSUPPORTED)],
        "its backend is KServe: KServe downloads the weights from spec.model.uri",
    )
)

_HOST_NETWORK = deployment(1)
_HOST_NETWORK["spec"]["workers"]["template"] = {
    "spec": {"hostNetwork": True, "containers": [{"name": "engine", "image": "vllm"}]}
}
MORE_CASES.append(
    Case(
        "a template with host access is kept off a cluster whose tenants run baseline",
        _HOST_NETWORK,
        [cluster("a", h100())],
        [("a", None, None, Rejection.POD_SECURITY_VIOLATION)],
        "its tenant namespaces run Pod Security baseline: "
        "spec.workers.template.spec.hostNetwork: Pod Security baseline forbids host namespaces",
    )
)

MORE_CASES.append(
    Case(
        "a serving replica is preempted on a cluster that allows it",
        deployment(1, priority="batch"),
        [cluster("a", h100(1), preemption="LowerPriority")],
        [
            ("a", None, None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", None, Rejection.INSUFFICIENT_CAPACITY),
            ("a", "h100", None, Rejection.PREEMPTED),
        ],
        "replica model-a-0 was preempted by replica urgent-a-0 of ModelDeployment urgent",
        existing=[
            replica("a", 0, priority="batch", serving=True),
            replica("a", 0, deployment_name="urgent", priority="critical", name="urgent-a-0"),
        ],
    )
)
