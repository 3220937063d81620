"""What the runner keeps of its own reads between calls, each keyed by what it is a
function of.

The runner lives as long as the function's pod (or a whole `modelplane render`),
and from one call to the next almost nothing it reads changes: the composite's
model, the fleet's lists and this deployment's observed replicas come again in the
next call of the same fetch loop, and again in later reconciles. Each value here is
a pure function of its key, so a kept value is what reading again would give; a
miss costs what reading always cost. Every memo is bounded and owned by the runner
(`FunctionRunner.kept`), never a module global, so a fresh runner reads cold.

- A composite's `Deployment` (`read_deployment`) and its spec's digest
  (`spec_digest`), by the very model it was read from: `observed_composite` hands
  out one shared model per composite's bytes, and models are never changed once read.
- Facts of a fetched list (its unreachable clusters, its serving replicas), by the
  digests of the list's objects (`required.Required.digests`).
- This deployment's observed replicas read into their model, and what their
  statuses say (`statuses`), by the marshalled plain data they were read from
  (`statuses.content_key`): equal bytes decode to an equal object.
- The Struct each composed resource (a replica, an endpoint) is emitted as, by the
  marshalled plain object it is built from (`compose`).
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

from collections.abc import Callable
from typing import Any, TypeVar

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2
from modelplane_models import ModelDeployment, ModelReplica

from compose_model_deployment.statuses import StatusFacts, content_key
from modelplane.core.bounded import BoundedMemo, ByIdentity
from modelplane.scheduling import Deployment, read_deployment, spec_digest
from modelplane.xfn.required import Required

B = TypeVar("B")
T = TypeVar("T")

# A deployment's few models (its composite while it changes) per runner.
DEPLOYMENTS = 1024
# A list's facts: a few lists per deployment (narrow and wide), for a fleet's deployments.
LISTS = 4096
# One entry per replica version: a fleet of 10,000 replicas, read by one process.
REPLICAS = 25_000


class Kept:
    """What one runner keeps between its calls (see the module's docstring)."""

    def __init__(self) -> None:
        self.deployments = ByIdentity[ModelDeployment, Deployment](DEPLOYMENTS)
        self.spec_digests = ByIdentity[ModelDeployment, str](DEPLOYMENTS)
        self.lists = BoundedMemo[tuple[str, tuple[bytes, ...]], frozenset[Any]](LISTS)
        self.replicas = BoundedMemo[bytes, ModelReplica](REPLICAS)
        self.structs = BoundedMemo[tuple[str, bytes], struct_pb2.Struct](REPLICAS)
        self.statuses = BoundedMemo[bytes, StatusFacts](REPLICAS)

    def deployment(self, model: ModelDeployment) -> Deployment:
        """`read_deployment(model)`; InvalidInputError as it raises it (never kept)."""
        return self.deployments.get_or_make(model, read_deployment)

    def spec_digest(self, model: ModelDeployment) -> str:
        """`spec_digest(model)`: what `status.matchTraceSpec` records of a spec."""
        return self.spec_digests.get_or_make(model, spec_digest)

    def of_list(
        self, fact: str, found: Required[T], read: Callable[[Required[T]], frozenset[Any]]
    ) -> frozenset[Any]:
        """`read(found)`, kept by `fact` (what `read` reads) and the digests of the
        list's objects, which fix every object, read or unreadable, in order."""
        digests = found.digests
        if len(digests) != len(found.items) + len(found.unreadable):
            # Not read into a model here, or merged from such lists: no key to keep it by.
            return read(found)
        return self.lists.get_or_make((fact, digests), lambda: read(found))

    def compose(
        self,
        desired: fnv1.Resource,
        how: str,
        body: B,
        build: Callable[[fnv1.Resource, B], None],
    ) -> None:
        """`build(desired, body)`, where `build` sets a resource from the plain data
        `body` alone and `how` names the way it does. Into an empty `desired` (what a
        function composing a resource first meets), the Struct `build` made for the
        same `how` and body before is copied; into one that holds something already,
        which `build` may merge with, `build` writes itself."""
        if desired.resource.fields:
            build(desired, body)
            return
        key = (how, content_key(body))
        made = self.structs.get(key)
        if made is None:
            scratch = fnv1.Resource()
            build(scratch, body)
            made = scratch.resource
            self.structs.put(key, made)
        desired.resource.CopyFrom(made)
