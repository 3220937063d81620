"""Real requests to fuzz from: what each function is sent while the examples render.

`example_requests(...)` renders example fleets in-process (the render engine
runs Crossplane's reconcile loop with the real functions) and records every
request each function receives. The last request for each composite is its
steady state, with everything observed, composed and required filled in: the
richest valid request there is to mutate.
"""

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.structs import to_dict
from modelplane_cli.packages import FUNCTION_NAMES
from modelplane_cli.render import (
    Apis,
    FunctionRegistry,
    SchemaAdmission,
    default_apis_dir,
    read_documents,
    render,
)
from modelplane_cli.render.runners import Runner

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"
# Every function, by the name its Composition calls it.
FUNCTIONS = FUNCTION_NAMES


class _Recorder:
    """A runner that keeps a copy of every request before passing it on."""

    def __init__(self, inner: Runner) -> None:
        self._inner = inner
        self.requests: list[fnv1.RunFunctionRequest] = []

    async def RunFunction(  # noqa: N802 (the gRPC method name)
        self, request: fnv1.RunFunctionRequest, context: Any, /
    ) -> fnv1.RunFunctionResponse:
        copy = fnv1.RunFunctionRequest()
        copy.CopyFrom(request)
        self.requests.append(copy)
        return await self._inner.RunFunction(request, context)


def _composite(req: fnv1.RunFunctionRequest) -> tuple[str, str]:
    metadata = to_dict(req.observed.composite.resource).get("metadata", {})
    return str(metadata.get("namespace", "")), str(metadata.get("name", ""))


@cache
def example_requests(*fleets: str) -> dict[str, tuple[fnv1.RunFunctionRequest, ...]]:
    """The steady-state request of every composite, by function name, for the
    examples rendered together (`example_requests("catalog", "fleet")`)."""
    apis = Apis.load(default_apis_dir())
    real = FunctionRegistry()
    recorders = {name: _Recorder(real.runner(name)) for name in FUNCTIONS}
    documents = read_documents([str(EXAMPLES / fleet) for fleet in fleets])
    admission = SchemaAdmission.from_files(apis.definition_files)
    result = render(documents, apis, FunctionRegistry(dict(recorders)), admission, in_process=True)
    if not result.ok:
        raise RuntimeError(f"the examples do not render: {result.errors}")
    found: dict[str, tuple[fnv1.RunFunctionRequest, ...]] = {}
    for name, recorder in recorders.items():
        last: dict[tuple[str, str], fnv1.RunFunctionRequest] = {}
        for req in recorder.requests:
            last[_composite(req)] = req
        found[name] = tuple(last[key] for key in sorted(last))
    return found


def requests_for(
    function: str, fleets: Sequence[str] = ("catalog", "fleet")
) -> list[fnv1.RunFunctionRequest]:
    """The steady-state requests one function (`modelplane-compose-...`) receives."""
    return list(example_requests(*fleets)[function])
