"""One slow reconcile does not stall the function server: others are answered meanwhile."""

import asyncio
import gc
import threading

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.runner import ComposeFunction, collector_paused
from modelplane.xfn.structs import to_dict
from modelplane_dev.testing import request, serving

# Only a failing test waits this long: ordering is asserted, never elapsed time.
PATIENCE = 30.0


class SlowWhenAsked(ComposeFunction):
    """Composes the composite named `slow` by spinning on the CPU until released."""

    validity_condition = "Valid"

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.release = threading.Event()

    def compose(self, req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        name = str(to_dict(req.observed.composite.resource)["metadata"]["name"])
        if name == "slow":
            self.started.set()
            # Busy, holding the GIL between switches, as a long evaluation does.
            spins = 0
            while not self.release.is_set() and spins < 10**9:
                spins += 1
        rsp.desired.composite.resource.update({"status": {"composed": name}})


def _composite(name: str) -> fnv1.RunFunctionRequest:
    return request({"apiVersion": "example.org/v1", "kind": "XThing", "metadata": {"name": name}})


def test_a_second_call_completes_while_a_slow_one_is_in_flight() -> None:
    runner = SlowWhenAsked()
    finished: list[str] = []

    async def scenario() -> None:
        try:
            async with serving(runner) as stub:

                async def call(name: str) -> fnv1.RunFunctionResponse:
                    rsp = await stub.RunFunction(_composite(name), timeout=PATIENCE)
                    finished.append(name)
                    return rsp

                slow = asyncio.create_task(call("slow"))
                assert await asyncio.to_thread(runner.started.wait, PATIENCE)
                fast = await call("fast")
                in_flight = not slow.done()
                runner.release.set()
                slow_rsp = await slow
                assert in_flight, "the slow call finished before the fast one was answered"
                assert to_dict(fast.desired.composite.resource)["status"]["composed"] == "fast"
                assert to_dict(slow_rsp.desired.composite.resource)["status"]["composed"] == "slow"
        finally:
            runner.release.set()

    asyncio.run(scenario())
    assert finished == ["fast", "slow"]


def test_the_collector_stays_paused_until_the_last_of_overlapping_composes_returns() -> None:
    assert gc.isenabled()
    first, second = collector_paused(), collector_paused()
    first.__enter__()
    second.__enter__()  # a second call's compose, in another worker thread
    first.__exit__(None, None, None)
    assert not gc.isenabled(), "the first call to return must not resume it under the second"
    second.__exit__(None, None, None)
    assert gc.isenabled()
