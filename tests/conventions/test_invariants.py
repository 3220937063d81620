"""Properties that hold for any scheduling block and any workload shape."""

import copy
import json
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane.conventions import TemplateContext, apply_conventions
from modelplane.core.kinds import pod_sites

from .support import handed, read_scheduling, typed

SHAPES = [
    "deployment-unified",
    "lws-disaggregated",
    "lws-disaggregated-mixed",
    "llmisvc-unified-multi",
    "llmisvc-disaggregated",
]

_templates = st.sampled_from(
    ["{{ .Namespace }}", "{{ .Cluster }}-gpu", "fixed", "{{ .Replica }}", "{{ .Priority }}x"]
)
_blocks = st.fixed_dictionaries(
    {"provider": st.sampled_from(["Default", "KAI", "Kueue", "Volcano", "Coscheduling"])},
    optional={
        "queue": _templates,
        "defaultPriority": st.sampled_from(["standard", "batch"]),
        "gang": st.fixed_dictionaries({"enabled": st.booleans()}),
        "defaultLabels": st.dictionaries(
            st.sampled_from(["example.com/team", "tier", "runai/project"]), _templates, max_size=3
        ),
        "defaultAnnotations": st.dictionaries(
            st.sampled_from(["example.com/cost", "note"]), _templates, max_size=2
        ),
        "kai": st.fixed_dictionaries({"podGrouper": st.sampled_from(["Automatic", "Modelplane"])}),
        "volcano": st.fixed_dictionaries({"lwsGangScheduling": st.booleans()}),
    },
)
_contexts = st.builds(
    TemplateContext,
    namespace=st.sampled_from(["ml-team", "research"]),
    name=st.sampled_from(["kimi", "qwen"]),
    replica=st.sampled_from(["kimi-0", "qwen-3"]),
    cluster=st.sampled_from(["prod-east", "lab"]),
    priority=st.sampled_from([None, "critical", "standard"]),
)

_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_settings
@given(block=_blocks, context=_contexts, shape=st.sampled_from(SHAPES))
def test_deterministic_idempotent_and_pure(
    block: dict[str, Any], context: TemplateContext, shape: str, build: Any
) -> None:
    manifests, _ = build.shapes[shape]()
    pristine = copy.deepcopy(manifests)
    config, _ = read_scheduling(block)

    first = apply_conventions(typed(manifests), config, context)
    second = apply_conventions(typed(manifests), config, context)
    assert manifests == pristine
    dump = json.dumps([handed(first), first.gangs], sort_keys=True)
    assert dump == json.dumps([handed(second), second.gangs], sort_keys=True)
    assert first.issues == second.issues

    again = apply_conventions(first.workloads, config, context)
    assert handed(again) == handed(first)
    assert again.gangs == first.gangs
    assert not [f for f in again.issues if f.reason == "PlatformKeyOverridden"]


@_settings
@given(block=_blocks, context=_contexts, shape=st.sampled_from(SHAPES))
def test_every_pod_goes_to_the_platform_scheduler(
    block: dict[str, Any], context: TemplateContext, shape: str, build: Any
) -> None:
    manifests, _ = build.shapes[shape]()
    config, _ = read_scheduling(block)
    result = apply_conventions(typed(manifests), config, context)
    for obj in handed(result):
        for site in pod_sites(obj):
            for _, pod_spec in site.specs:
                assert pod_spec.get("schedulerName") == config.scheduler_name
    names = [o["metadata"]["name"] for o in result.gangs]
    assert len(names) == len(set(names))


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value inside `node`, containers included."""
    children: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        children = list(cast(dict[str, Any], node).items())
    elif isinstance(node, list):
        children = list(enumerate(cast(list[Any], node)))
    out: list[tuple[Any, ...]] = []
    for key, value in children:
        out.append((*prefix, key))
        out.extend(_paths(value, (*prefix, key)))
    return out


_GANG_BLOCKS = [
    {"provider": "Coscheduling"},
    {"provider": "KAI", "queue": "q", "kai": {"podGrouper": "Modelplane"}},
    {"provider": "Volcano", "queue": "q", "volcano": {"lwsGangScheduling": False}},
    {"provider": "Kueue", "queue": "q", "defaultLabels": {"example.com/team": "t"}},
]
_CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", "batch")
_JUNK = st.sampled_from(["x", 7, -1, True, None, [], [1], {}, {"a": 1}])


@_settings
@given(
    shape=st.sampled_from(SHAPES),
    block=st.sampled_from(_GANG_BLOCKS),
    junk=_JUNK,
    data=st.data(),
)
def test_a_malformed_workload_never_raises(
    shape: str, block: dict[str, Any], junk: object, data: st.DataObject, build: Any
) -> None:
    """Whatever one field of a workload holds, the conventions report, never raise."""
    manifests, _ = build.shapes[shape]()
    # Typed as rendered first: the kind travels with the workload, whatever its manifest says.
    workloads = typed(manifests)
    target = data.draw(st.sampled_from(manifests))
    path = data.draw(st.sampled_from(_paths(target)))
    node: Any = target
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = junk
    config, _ = read_scheduling(block)
    result = apply_conventions(workloads, config, _CONTEXT)
    assert len(handed(result)) == len(manifests)
