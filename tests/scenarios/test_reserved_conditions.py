"""No function sets a condition type Crossplane reserves, in any example fleet.

Crossplane drops a function's condition of a reserved type
(`vocabulary.RESERVED_CONDITION_TYPES`), and so does `render`; this reads what
each function answered, before the engine drops anything, for every round of
every example set.
"""

import asyncio

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest

from modelplane.core.vocabulary import CONDITION_TYPES, RESERVED_CONDITION_TYPES
from modelplane_cli.render import (
    DEFAULT_ROUNDS,
    InProcessFunctions,
    RenderResult,
    read_documents,
    render_async,
)

from .fleets import EXAMPLES, Renderer
from .test_examples import SETS

# The conditions Crossplane's composite reconciler itself sets on every composite.
CROSSPLANE_OWN = frozenset({"Ready", "Synced", "Responsive"})


class RecordingFunctions:
    """The in-process functions, keeping each condition type every call answered."""

    def __init__(self, inner: InProcessFunctions) -> None:
        self.inner = inner
        self.set: dict[str, set[str]] = {}

    async def run(self, name: str, request: bytes) -> fnv1.RunFunctionResponse:
        rsp = await self.inner.run(name, request)
        types = self.set.setdefault(name, set())
        types.update(c.type for c in rsp.conditions)
        return rsp

    async def close(self) -> None:
        await self.inner.close()


def _render(renderer: Renderer, paths: tuple[str, ...]) -> tuple[RenderResult, dict[str, set[str]]]:
    functions = RecordingFunctions(InProcessFunctions(renderer.registry))
    documents = read_documents([str(EXAMPLES / p) for p in paths])
    result = asyncio.run(
        render_async(documents, renderer.apis, functions, renderer.admission, DEFAULT_ROUNDS)
    )
    return result, functions.set


@pytest.mark.parametrize("example", sorted(SETS))
def test_no_function_result_carries_a_reserved_type(renderer: Renderer, example: str) -> None:
    result, answered = _render(renderer, SETS[example])

    assert result.ok, result.errors
    # Every function of the set ran and set conditions: the check below is not empty.
    assert sum(len(types) for types in answered.values()) > 3, answered
    reserved = {fn: types & RESERVED_CONDITION_TYPES for fn, types in answered.items()}
    assert all(not types for types in reserved.values()), reserved
    unknown = {fn: types - CONDITION_TYPES for fn, types in answered.items()}
    assert all(not types for types in unknown.values()), unknown
    # So every condition on a composite is either Crossplane's own or Modelplane's.
    for obj in result.objects:
        for condition in obj.get("status", {}).get("conditions", []) if _composite(obj) else []:
            assert condition["type"] in CONDITION_TYPES | CROSSPLANE_OWN, obj["metadata"]


def _composite(obj: dict[str, object]) -> bool:
    return str(obj.get("apiVersion", "")).startswith("modelplane.ai/")
