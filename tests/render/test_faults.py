"""Each fault `--faults` injects, one at a time: what it writes, and that it clears.

A fault kind is isolated by giving it rate 1 and every other rate 0.
"""

from __future__ import annotations

import asyncio
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from google.protobuf import struct_pb2

from modelplane_cli.render.apiservers import WorkloadApiServers
from modelplane_cli.render.faults import (
    FAULT_ROUNDS,
    RATES,
    Fault,
    Faults,
    FaultyFunctions,
    draw,
)
from modelplane_cli.render.providers import Providers
from modelplane_cli.render.runners import FunctionCallError
from modelplane_cli.render.world import ObjectKey, World

Obj = dict[str, Any]
NOW = "2026-12-01T10:30:00Z"
OBJECT_API = "kubernetes.m.crossplane.io/v1alpha1"


def only(fault: Fault, seed: int = 7) -> Faults:
    faults = Faults(seed, rates={f: 1.0 if f == fault else 0.0 for f in Fault})
    faults.now = NOW
    return faults


def config_map_object(name: str, labels: dict[str, str] | None = None) -> Obj:
    return {
        "apiVersion": OBJECT_API,
        "kind": "Object",
        "metadata": {"name": name, "namespace": "ns", "labels": labels or {}},
        "spec": {
            "forProvider": {
                "manifest": {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "ns"},
                    "data": {"a": "b"},
                }
            }
        },
    }


def cluster(name: str) -> Obj:
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": {},
    }


def conditions(world: World, key: ObjectKey) -> dict[str, Obj]:
    obj = world.get(key) or {}
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def test_draws_are_fixed_by_the_seed_and_what_they_hit() -> None:
    assert draw(3, "a", 1) == draw(3, "a", 1)
    assert draw(3, "a", 1) != draw(4, "a", 1)
    assert draw(3, "a", 1) != draw(3, "a", 2)
    assert all(0 <= draw(s, "x") < 1 for s in range(100))


def test_the_rates_are_documented_for_every_fault() -> None:
    assert set(RATES) == set(Fault)
    assert all(0 < rate < 1 for rate in RATES.values())


@pytest.mark.parametrize(
    ("fault", "words"),
    [(Fault.APPLY_REFUSED, "admission webhook denied"), (Fault.APPLY_TIMEOUT, "deadline")],
)
def test_a_failed_apply_is_written_and_retried_next_round(fault: Fault, words: str) -> None:
    world = World([config_map_object("a")])
    key = world.all_keys()[0]
    faults = only(fault)
    providers = Providers(WorkloadApiServers(None), faults.apply)
    faults.start_round(1, world)
    providers.reconcile(world, key)
    synced = conditions(world, key)["Synced"]
    assert (synced["status"], synced["reason"]) == ("False", "ReconcileError")
    assert synced["message"].startswith("create failed: cannot create object: ")
    assert words in synced["message"]
    assert "atProvider" not in (world.get(key) or {})["status"]
    assert [i.fault for i in faults.injected] == [fault]
    # After the fault rounds the provider retries what failed, and it is applied.
    retried = faults.start_round(FAULT_ROUNDS + 1, world)
    assert retried == {key}
    providers.reconcile(world, key)
    assert conditions(world, key)["Synced"]["status"] == "True"
    assert not faults.settling


def test_a_failing_observe_keeps_what_the_provider_reported() -> None:
    world = World([config_map_object("a")])
    key = world.all_keys()[0]
    providers = Providers(WorkloadApiServers(None))
    providers.reconcile(world, key)
    reported = (world.get(key) or {})["status"]["atProvider"]
    faults = only(Fault.SYNC_FAILING)
    faults.start_round(1, world)
    faults.observe(world, [key])
    after = conditions(world, key)
    assert after["Synced"]["status"] == "False" and after["Ready"]["status"] == "True"
    assert (world.get(key) or {})["status"]["atProvider"] == reported
    # Its provider reports it again the next round.
    assert faults.start_round(FAULT_ROUNDS + 1, world) == {key}
    providers.reconcile(world, key)
    assert conditions(world, key)["Synced"]["status"] == "True"


@pytest.mark.parametrize("seed", range(6))
def test_an_unreachable_cluster_stops_syncing_every_object_on_it(seed: int) -> None:
    world = World(
        [
            cluster("east"),
            config_map_object("own", {"crossplane.io/composite": "east"}),
            config_map_object("replica", {"modelplane.ai/cluster": "east"}),
            config_map_object("elsewhere", {"crossplane.io/composite": "something-else"}),
        ]
    )
    managed = [k for k in world.all_keys() if k.kind == "Object"]
    providers = Providers(WorkloadApiServers(None))
    for key in managed:
        providers.reconcile(world, key)
    faults = only(Fault.CLUSTER_UNREACHABLE, seed)
    faults.start_round(1, world)
    faults.observe(world, managed)
    (outage,) = faults.injected
    assert outage.target.startswith("InferenceCluster east for ")
    since = {conditions(world, k)["Synced"].get("lastTransitionTime") for k in managed}
    # Dated past the 5-minute grace, or within it.
    assert since - {None} <= {"2026-12-01T10:20:00Z", "2026-12-01T10:28:00Z"}
    failing = {k.name for k in managed if conditions(world, k)["Synced"]["status"] == "False"}
    assert failing == {"own", "replica"}


def test_an_outage_lasts_two_to_four_rounds_and_starts_only_in_fault_rounds() -> None:
    world = World([cluster("east")])
    for seed in range(20):
        faults = only(Fault.CLUSTER_UNREACHABLE, seed)
        for number in range(1, FAULT_ROUNDS + 3):
            faults.start_round(number, world)
        lengths = {int(i.target.split(" for ")[1].split()[0]) for i in faults.injected}
        assert lengths <= {2, 3, 4}
        assert all(i.round <= FAULT_ROUNDS for i in faults.injected)


class Echo:
    """A function client that answers with the request it got, and asks for `asked`."""

    def __init__(self, asked: dict[str, fnv1.ResourceSelector]) -> None:
        self.asked = asked
        self.got: list[fnv1.RunFunctionRequest] = []

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        self.got.append(fnv1.RunFunctionRequest.FromString(request))
        rsp = fnv1.RunFunctionResponse()
        for key, selector in self.asked.items():
            rsp.requirements.resources[key].CopyFrom(selector)
        return rsp

    async def close(self) -> None:
        return None


def test_a_failed_function_call_is_unavailable() -> None:
    faults = only(Fault.FUNCTION_FAILED)
    faults.start_round(1, World([]))
    client = FaultyFunctions(faults, Echo({}))
    with pytest.raises(FunctionCallError) as failed:
        asyncio.run(client.run("fn", fnv1.RunFunctionRequest().SerializeToString()))
    assert failed.value.code == "Unavailable"
    # No call fails once the fault rounds are over.
    faults.start_round(FAULT_ROUNDS + 1, World([]))
    asyncio.run(client.run("fn", fnv1.RunFunctionRequest().SerializeToString()))


def _request_with(name: str) -> bytes:
    request = fnv1.RunFunctionRequest()
    resource = struct_pb2.Struct()
    resource.update({"metadata": {"name": name}})
    for requirement in ("cluster", "clusters"):
        request.required_resources[requirement].items.add().resource.CopyFrom(resource)
    return request.SerializeToString()


def test_a_resource_required_by_name_goes_missing_for_a_call() -> None:
    faults = only(Fault.REQUIRED_MISSING)
    faults.start_round(1, World([]))
    asked = {
        "cluster": fnv1.ResourceSelector(api_version="v1", kind="X", match_name="east"),
        "clusters": fnv1.ResourceSelector(
            api_version="v1", kind="X", match_labels=fnv1.MatchLabels()
        ),
    }
    echo = Echo(asked)
    client = FaultyFunctions(faults, echo)
    # The first call tells which requirements are by name: nothing is dropped yet.
    asyncio.run(client.run("fn", _request_with("east")))
    asyncio.run(client.run("fn", _request_with("east")))
    first, second = echo.got
    assert len(first.required_resources["cluster"].items) == 1
    assert len(second.required_resources["cluster"].items) == 0
    # A list is left whole.
    assert len(second.required_resources["clusters"].items) == 1
    assert [str(i) for i in faults.injected] == ["round 1: RequiredMissing east from cluster of fn"]


def test_the_same_seed_injects_the_same_faults() -> None:
    def run(seed: int) -> list[str]:
        world = World([cluster("east"), cluster("west")])
        faults = Faults(seed)
        faults.now = NOW
        for number in range(1, FAULT_ROUNDS + 1):
            faults.start_round(number, world)
        return [str(i) for i in faults.injected]

    assert run(5) == run(5)
    assert any(run(s) != run(5) for s in range(6, 12))
