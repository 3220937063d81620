"""A replica updated in place counts as serving only on a verdict about its new revision.

Right after this function writes a replica's new revision, the replica's status still
holds the Serving verdict compose-model-replica made for the old one: Crossplane sets
a function's conditions with no observedGeneration, so only `status.servingRevision`
ties the verdict to a revision. A rollout that read the old verdict as a new one would
take the next batch down while the first has not even been applied.
"""

import copy
from typing import Any

import pytest

from .objects import as_running, cluster, deployment, revision_of
from .test_settled import TRACE, fetch_loop

REVISION = "modelplane.ai/revision"


def rolling(image: str) -> dict[str, Any]:
    """Two replicas, rolled one at a time in place (no surge)."""
    composite = copy.deepcopy(deployment(2))
    composite["spec"]["strategy"] = {"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    composite["spec"]["workers"]["template"]["spec"]["containers"][0]["image"] = image
    return composite


OLD, NEW = rolling("vllm:v1"), rolling("vllm:v2")
OLD_REVISION, NEW_REVISION = revision_of(OLD), revision_of(NEW)
CLUSTERS = [cluster("a", 4), cluster("b", 4)]


def judged(obj: dict[str, Any], serving: bool, revision: str | None) -> dict[str, Any]:
    """A composed replica as observed, its Serving verdict made for `revision` (None: a
    status written before replicas published one)."""
    running = as_running(obj)
    status: dict[str, Any] = {
        "conditions": [{"type": "Serving", "status": "True" if serving else "False"}]
    }
    if revision is not None:
        status["servingRevision"] = revision
    running["status"] = status
    return running


def reconcile(composite: dict[str, Any], observed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return fetch_loop([*CLUSTERS, *observed.values()], composite, observed)[0]


def first_batch() -> tuple[dict[str, Any], dict[str, dict[str, Any]], str, dict[str, Any]]:
    """NEW's composite as its first reconcile left it, its replicas serving OLD, the
    replica that reconcile updates in place, and that replica as written."""
    composite = copy.deepcopy(OLD)
    composite["status"] = {"matchTrace": []}
    placed = reconcile(composite, {})
    observed = {
        key: judged(body["resource"], True, OLD_REVISION)
        for key, body in placed["desired"]["resources"].items()
    }
    trace = placed["desired"]["composite"]["resource"]["status"]
    bumped = {**copy.deepcopy(NEW), "status": {k: trace[k] for k in TRACE if k in trace}}
    rsp = reconcile(bumped, observed)
    written = {
        key: body["resource"]
        for key, body in rsp["desired"]["resources"].items()
        if body["resource"]["metadata"]["annotations"][REVISION] == NEW_REVISION
    }
    assert len(written) == 1, "maxUnavailable 1 updates one replica first"
    ((key, body),) = written.items()
    # What that reconcile published, as the next one observes it (NEW decided over the fleet).
    published = rsp["desired"]["composite"]["resource"]["status"]
    edited = {**copy.deepcopy(NEW), "status": {k: published[k] for k in TRACE if k in published}}
    return edited, observed, key, body


def revisions(rsp: dict[str, Any]) -> dict[str, str]:
    return {
        key: body["resource"]["metadata"]["annotations"][REVISION]
        for key, body in rsp["desired"]["resources"].items()
    }


def after(serving: bool, revision: str | None) -> dict[str, Any]:
    """The next reconcile, the updated replica's status judged as given: decided on
    the deployment's own clusters, as on a control plane (the edit was decided over
    the fleet by the reconcile before)."""
    edited, observed, key, body = first_batch()
    observed = {**observed, key: judged(body, serving, revision)}
    got = reconcile(edited, observed)
    assert "inferenceclusters" not in got["requirements"]["resources"]
    return got


@pytest.mark.parametrize(
    ("serving", "revision"),
    [
        pytest.param(True, OLD_REVISION, id="serving, judged for the old revision"),
        pytest.param(False, OLD_REVISION, id="not serving"),
    ],
)
def test_a_stale_verdict_holds_the_next_batch(serving: bool, revision: str) -> None:
    """A Serving=True made for the old revision reads exactly as the verdict its
    replica gives once it sees the change (not serving): the whole response is the
    same, and the other replica keeps the old revision (maxUnavailable 1 is held)."""
    got = after(serving, revision)
    want = after(False, NEW_REVISION)
    assert got == want
    assert sorted(revisions(got).values()) == sorted([OLD_REVISION, NEW_REVISION])
    progressing = {c["type"]: c for c in got["conditions"]}["Progressing"]
    assert progressing["message"].startswith(f"1 of 2 replicas run revision {NEW_REVISION}")


@pytest.mark.parametrize(
    "revision",
    [
        pytest.param(NEW_REVISION, id="judged for the new revision"),
        pytest.param(None, id="status from before servingRevision"),
    ],
)
def test_a_current_verdict_lets_the_rollout_go_on(revision: str | None) -> None:
    """Serving for the revision it carries, the replica counts, and the next batch is
    updated; a status from before replicas published the field is judged as before,
    so an upgrade stalls no rollout."""
    got = after(True, revision)
    assert set(revisions(got).values()) == {NEW_REVISION}
