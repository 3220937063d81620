"""A fuzz run cut into parts checks exactly the mutations of the whole run.

The function fuzzers are split into parametrized parts so that xdist's workers
share them; that is only sound if the parts, together, are the whole run, and a
part's mutations do not depend on which parts ran before it in the process.
"""

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.structs import to_struct
from modelplane_dev.fuzz import Fuzzer


class _Refuses:
    """A runner that answers every request fatally, so every mutation is reported."""

    async def RunFunction(
        self, request: fnv1.RunFunctionRequest, context: Any, /
    ) -> fnv1.RunFunctionResponse:
        rsp = fnv1.RunFunctionResponse()
        rsp.results.add(severity=fnv1.SEVERITY_FATAL, message=request.SerializeToString().hex())
        return rsp


def _request() -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.observed.composite.resource.CopyFrom(
        to_struct(
            {
                "apiVersion": "modelplane.io/v1alpha1",
                "kind": "Thing",
                "metadata": {"name": "a", "labels": {"team": "x"}},
                "spec": {"replicas": 2, "names": ["p", "q"], "on": True},
            }
        )
    )
    req.observed.resources["object"].resource.CopyFrom(
        to_struct({"kind": "Object", "metadata": {"name": "o"}, "spec": {"n": 1}})
    )
    req.required_resources["things"].items.add().resource.CopyFrom(
        to_struct({"kind": "Other", "metadata": {"name": "b"}})
    )
    return req


def _reported(parts: list[int], of: int) -> list[tuple[int, str, str]]:
    fuzzer = Fuzzer(_Refuses())
    found = [
        (f.iteration, f.mutation, f.problem)
        for part in parts
        for f in fuzzer.run([_request()], seed=3, count=60, part=part, parts=of)
    ]
    return sorted(found)


def test_the_parts_together_are_the_whole_run() -> None:
    whole = _reported([0], 1)
    assert [iteration for iteration, _, _ in whole] == list(range(60))
    assert _reported([0, 1, 2, 3], 4) == whole
    assert _reported([3, 1, 0, 2], 4) == whole


def test_a_part_is_the_same_alone_as_after_the_others() -> None:
    assert _reported([2], 4) == [found for found in _reported([0, 1, 2], 4) if found[0] % 4 == 2]


def test_the_mutations_are_not_all_alike() -> None:
    assert len({mutation for _, mutation, _ in _reported([0], 1)}) > 30


def test_a_part_outside_the_parts_is_refused() -> None:
    with pytest.raises(ValueError, match="part 4 is not one of 4 parts"):
        Fuzzer(_Refuses()).run([_request()], seed=3, count=60, part=4, parts=4)
