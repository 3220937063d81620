"""The scheduler registry: one module per scheduler, and nothing else to touch."""

from dataclasses import dataclass
from typing import Any

import pytest
from modelplane_models.inference_cluster import Provider, Scheduling

from modelplane.conventions import SchedulingConfig, TemplateContext, apply_conventions
from modelplane.conventions.schedulers import (
    SCHEDULERS,
    GangObject,
    Keys,
    Platform,
    Scheduler,
    strictest_lws_name_max,
)
from modelplane.core.kinds import PodSet, WorkloadKind
from modelplane.workloads.identity import LEADER_WORKER_SET_NAME_MAX

from .support import handed, typed

CONTEXT = TemplateContext("ml-team", "kimi", "kimi-0", "prod-east", "batch")


def test_the_registry_is_the_xrds_provider_enum() -> None:
    assert list(SCHEDULERS) == [p.value for p in Provider]
    for name, scheduler in SCHEDULERS.items():
        assert scheduler.name == name
        if scheduler.settings_field is not None:
            assert scheduler.settings_field in Scheduling.model_fields


@pytest.mark.parametrize("scheduler", SCHEDULERS.values(), ids=lambda s: s.name)
def test_gang_keys_are_reserved(scheduler: type[Scheduler]) -> None:
    """No ML team may join a pod to a gang by hand, whatever the scheduler."""
    assert all(scheduler().reserves(key) for key in scheduler.gang_keys)


def test_the_renderer_names_lws_within_every_schedulers_limit() -> None:
    assert strictest_lws_name_max() == 39
    assert LEADER_WORKER_SET_NAME_MAX == 39


@dataclass(frozen=True)
class Flux(Scheduler):
    """A sixth scheduler, written here as its own module would be."""

    name = "Flux"
    default_scheduler_name = "flux-scheduler"
    reserved_keys = ("flux.example.com/",)
    gang_keys = ("flux.example.com/gang",)

    def pod_keys(self, platform: Platform) -> Keys:
        return Keys({}, {"flux.example.com/queue": platform.queue or "default"})

    def preset_annotations(self, queued: bool) -> frozenset[str]:
        return frozenset({"flux.example.com/queue"})

    def composes_gang(self) -> bool:
        return True

    def gang(self, name: str, pods: PodSet, platform: Platform) -> GangObject:
        return GangObject(
            "flux.example.com/v1",
            {"size": pods.pods},
            pod_labels={"flux.example.com/gang": name},
        )

    def object_keys(self, kind: WorkloadKind, platform: Platform) -> Keys:
        return Keys({"flux.example.com/kind": kind.kind}, {})


def test_a_sixth_scheduler_needs_nothing_but_its_own_class(build: Any) -> None:
    template = build.pod_template(annotations={"flux.example.com/queue": "mine"})
    config = SchedulingConfig(scheduler=Flux(), scheduler_name=Flux.default_scheduler_name)
    result = apply_conventions(typed([build.lws(size=4, template=template)]), config, CONTEXT)
    (group,) = result.gangs
    assert (group["apiVersion"], group["kind"], group["spec"]) == (
        "flux.example.com/v1",
        "PodGroup",
        {"size": 4},
    )
    (obj,) = handed(result)
    assert obj["metadata"]["labels"]["flux.example.com/kind"] == "LeaderWorkerSet"
    for key in ("leaderTemplate", "workerTemplate"):
        pod = obj["spec"]["leaderWorkerTemplate"][key]
        assert pod["spec"]["schedulerName"] == "flux-scheduler"
        assert pod["metadata"]["labels"]["flux.example.com/gang"] == group["metadata"]["name"]
        assert pod["metadata"]["annotations"]["flux.example.com/queue"] == "default"
    # The team's own queue annotation is the platform's key: overridden, with a warning.
    assert {i.reason for i in result.issues} == {"PlatformKeyOverridden"}
