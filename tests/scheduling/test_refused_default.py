"""An InferenceCluster whose `spec.scheduling.defaultPriority` is refused, on both sides.

`parse_scheduling` is the one reader of the block: the side that composes a
replica's workloads and the fleet scheduler's adapter take what they use from its
config, so they cannot disagree. A refused default (the API server's CEL rules
would have turned it away; a function still must not act on it) is no priority:
nothing renders under the block, and placement does not send a deployment that
names no priority of its own there (design/scheduling.md, rule 2).
"""

from typing import Any

import pytest
from modelplane_models import InferenceCluster

from modelplane.conventions import TemplateContext, apply_conventions, parse_scheduling
from modelplane.core.issues import Issue, parse_object
from modelplane.core.vocabulary import Reason
from modelplane.scheduling import Rejection

from .builders import cluster, deployment, h100, placements, read_one_cluster, replica, run

FIELD = "spec.scheduling.defaultPriority"

# (id, the cluster's spec.scheduling, why its defaultPriority is refused)
CASES = [
    (
        "a system- PriorityClass",
        {"defaultPriority": "system-cluster-critical"},
        "priority 'system-cluster-critical' is a system PriorityClass, never used for model pods",
    ),
    (
        "outside allowedPriorities",
        {"defaultPriority": "gold", "allowedPriorities": ["silver"]},
        "default priority 'gold' is not in allowedPriorities",
    ),
]
IDS = [case[0] for case in CASES]


def _refusing(name: str, block: dict[str, Any]) -> dict[str, Any]:
    obj = cluster(name, h100())
    obj["spec"]["scheduling"] = block
    return obj


@pytest.mark.parametrize(("block", "why"), [case[1:] for case in CASES], ids=IDS)
def test_composing_side_refuses_the_block(block: dict[str, Any], why: str) -> None:
    model = parse_object(InferenceCluster, _refusing("a", block))
    config, issues = parse_scheduling(model.spec.scheduling if model.spec else None)
    refused = Issue(FIELD, why, Reason.INVALID_SCHEDULING)
    assert config.default_priority is None
    assert config.refused_default == refused
    assert issues == [refused]
    assert config.errors == (refused,)
    # Nothing renders under the block, whatever the replica's priority.
    for priority in (None, "silver"):
        context = TemplateContext("ml", "model", "model-0", "a", priority)
        result = apply_conventions([], config, context)
        assert not result.ok
        assert refused in result.issues


@pytest.mark.parametrize(("block", "why"), [case[1:] for case in CASES], ids=IDS)
def test_placement_side_never_resolves_to_it(block: dict[str, Any], why: str) -> None:
    read = read_one_cluster(_refusing("a", block))
    assert (read.default_priority, read.refused_default) == (None, why)

    # A deployment naming no priority goes to a cluster whose block it can take.
    decision = run(deployment(1), [_refusing("a", block), cluster("b", h100())])
    assert placements(decision) == ["b/0:h100"]
    (entry,) = decision.match_trace()
    assert (entry.cluster, entry.reason, entry.message) == (
        "a",
        Rejection.PRIORITY_NOT_ALLOWED,
        f"the deployment names no priority and the cluster's {FIELD} is refused: {why}",
    )

    # A serving replica of it already there moves make-before-break: it keeps its
    # place until its replacement on b serves.
    moving = run(
        deployment(1),
        [_refusing("a", block), cluster("b", h100())],
        [replica("a", 0, serving=True)],
    )
    assert placements(moving) == ["a/0:h100", "b/0:h100"]
    assert moving.removed == ()

    # One naming a priority of its own takes nothing from the default when placed.
    named = run(deployment(1, priority="silver"), [_refusing("a", block)])
    assert placements(named) == ["a/0:h100"]
    assert named.match_trace() == []
