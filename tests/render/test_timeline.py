"""A render priced in wall-clock time: TTL requeues, provider polls, watches, `--timeline`.

The scenario: a cluster-scoped `XPlatform` composes the ConfigMap `settings` the
`XParent` requires (a required resource: not watched, seen on the parent's TTL
requeue); the parent then changes its children's replicas, so each child updates
its Object (a Deployment): the provider applies it at once and reports the rollout
done on its next poll, or at once when the Object is watched.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from crossplane.function import resource, response

from modelplane_cli.render import RenderResult, intervals
from modelplane_cli.render.summary import summarize, table
from modelplane_cli.render.timeline import clock, duration, listing

from .support import (
    PARENT,
    ChildRunner,
    FakeFunction,
    ParentRunner,
    condition,
    default_runners,
    one,
    render_text,
)
from .test_cli import cli

PLATFORM = """---
apiVersion: example.org/v1
kind: XPlatform
metadata: {name: ops}
spec: {region: eu}
"""


class SettingsPlatform(FakeFunction):
    """Composes the parent's required ConfigMap `settings`: two replicas per child."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        resource.update(
            rsp.desired.resources["settings"],
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "team-a"},
                "data": {"replicas": "2"},
            },
        )
        rsp.desired.resources["settings"].ready = fnv1.READY_TRUE


class WatchedChild(ChildRunner):
    """The child's Object with `spec.watch: true`."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        body = resource.struct_to_dict(rsp.desired.resources["workload"].resource)
        body["spec"]["watch"] = True
        resource.update(rsp.desired.resources["workload"], body)


def _render(apis_dir: Path, child: FakeFunction) -> RenderResult:
    runners = {**default_runners(), "fn-platform": SettingsPlatform(), "fn-child": child}
    return render_text(apis_dir, PARENT + PLATFORM, runners)


def test_a_required_resource_costs_a_ttl_and_a_rollout_a_poll_unless_watched(
    apis_dir: Path,
) -> None:
    plain = _render(apis_dir, ChildRunner())
    watched = _render(apis_dir, WatchedChild())

    for result in (plain, watched):
        assert result.ok, result.errors
    # The parent sees the platform's ConfigMap only on its TTL requeue (the SDK's
    # default TTL); each child's Object, updated for two replicas, reports its
    # rollout done on provider-kubernetes' next poll.
    assert plain.defaults.seconds == intervals.FUNCTION_TTL + intervals.KUBERNETES_POLL
    # Watches on change nothing for an Object that does not ask to be watched.
    assert plain.watched.seconds == plain.defaults.seconds
    # An Object that sets spec.watch: true is re-observed as its Deployment changes.
    assert watched.defaults.seconds == plain.defaults.seconds
    assert watched.watched.seconds == intervals.FUNCTION_TTL


def test_the_timeline_lists_when_each_composite_reaches_each_state(apis_dir: Path) -> None:
    result = _render(apis_dir, ChildRunner())

    text = listing(result.timeline, table)

    lines = text.splitlines()
    assert lines[0] == "TIMELINE (default intervals)"
    assert lines[1].split() == ["TIME", "COMPOSITE", "CONDITION", "STATUS", "REASON"]
    rows = [line.split() for line in lines[2:]]
    # Time never runs backwards.
    moments = [row[0] for row in rows]
    assert moments == sorted(moments)
    ready_at = clock(intervals.FUNCTION_TTL + intervals.KUBERNETES_POLL)
    # The parent's children become ready only once the rollout is observed.
    assert [ready_at, "XParent", "team-a/web", "ChildrenReady", "True", "AllReady"] in rows
    # The platform is ready at once: it waits on nothing.
    assert ["+00m00s", "XPlatform", "ops", "Ready", "True", "Available"] in rows
    # Each child was first Ready, then not while its Deployment rolled out, then again.
    # Each child: not Ready when created; Ready for good only once its two-replica
    # Deployment, changed on the parent's TTL requeue, is observed a poll later.
    child = [[row[0], *row[4:]] for row in rows if row[2] == "team-a/web-0" and row[3] == "Ready"]
    assert child[0] == ["+00m00s", "False", "Creating"]
    assert child[-1] == [ready_at, "True", "Available"]
    assert all(moment <= ready_at for moment, *_ in child)
    # Crossplane's Responsive is on every composite, and True throughout: no step.
    assert all(row[3] != "Responsive" for row in rows)
    parent = one(result, "XParent")
    assert condition(parent, "Responsive")["reason"] == "WatchCircuitClosed"


def test_the_summary_says_how_long_with_default_intervals_and_with_watches(
    apis_dir: Path,
) -> None:
    result = _render(apis_dir, WatchedChild())

    text = summarize(result, ["XParent", "XChild", "XPlatform"], with_timeline=True)

    first = text.splitlines()[0]
    assert first.endswith(
        f"(converged; {duration(intervals.FUNCTION_TTL + intervals.KUBERNETES_POLL)} on a "
        f"control plane with default intervals, {duration(intervals.FUNCTION_TTL)} with "
        "watches on)."
    )
    assert "\nTIMELINE (default intervals)\n" in text


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0, "under a second"),
        (1, "about 1 second"),
        (60, "about 60 seconds"),
        (660, "about 11 minutes"),
        (3600, "about 60 minutes"),
        (7260, "about 2 hours 1 minute"),
    ],
)
def test_durations_read_as_a_person_says_them(seconds: float, said: str) -> None:
    assert duration(seconds) == said


def test_the_cli_prices_with_watches_and_lists_the_timeline(apis_dir: Path, tmp_path: Path) -> None:
    inputs = tmp_path / "fleet"
    inputs.mkdir()
    (inputs / "web.yaml").write_text(PARENT + PLATFORM)
    runners = {**default_runners(), "fn-platform": SettingsPlatform(), "fn-child": WatchedChild()}

    code, out, err = cli([str(inputs), "--apis", str(apis_dir), "--watches", "--timeline"], runners)

    assert code == 0, err
    first = out.splitlines()[0]
    assert first.endswith(
        f"(converged; {duration(intervals.FUNCTION_TTL)} on a control plane with watches on, "
        f"{duration(intervals.FUNCTION_TTL + intervals.KUBERNETES_POLL)} with default "
        "intervals)."
    )
    assert "\nTIMELINE (watches on)\n" in out

    code, out, err = cli(
        [str(inputs), "--apis", str(apis_dir), "-o", "yaml", "--timeline"], runners
    )

    assert code == 0
    assert err.startswith("TIMELINE (default intervals)\n")
    assert "TIMELINE" not in out


def test_the_function_ttl_is_the_sdk_default() -> None:
    assert response.DEFAULT_TTL.total_seconds() == intervals.FUNCTION_TTL


class QuickParent(ParentRunner):
    """The parent's function asks to be called again after 15 seconds."""

    async def RunFunction(
        self, request: fnv1.RunFunctionRequest, context: Any
    ) -> fnv1.RunFunctionResponse:
        rsp = response.to(request, ttl=timedelta(seconds=15))
        self.compose(request, rsp)
        return rsp


def test_a_composite_requeues_after_the_smallest_ttl_its_pipeline_returned(
    apis_dir: Path,
) -> None:
    runners = {
        **default_runners(),
        "fn-platform": SettingsPlatform(),
        "fn-child": WatchedChild(),
        "fn-parent": QuickParent(),
    }

    result = render_text(apis_dir, PARENT + PLATFORM, runners)

    assert result.watched.seconds == 15
    assert result.defaults.seconds == 15 + intervals.KUBERNETES_POLL
