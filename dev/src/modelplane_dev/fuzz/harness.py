"""Fuzz a composition function with mutated copies of valid requests.

`Fuzzer(runner).run(requests, seed=..., count=...)` mutates one part of a
request at a time (its composite, one observed composed resource, or one item of
a required resource, which may also be removed, duplicated or joined by
garbage), calls the runner's RunFunction directly, and checks what every
Modelplane function promises for input it can read at all:

- RunFunction returns: no exception escapes;
- no fatal result (the safety net's InternalError) comes back;
- every resource Crossplane observed as composed is still desired: Crossplane
  deletes what a function stops emitting.

The last check is waived for one mutation when the caller's reader for that
part (`readers`: the generated model and whatever else the function checks)
still accepts the mutated object: then the mutation was a valid edit (a lower
replica count, a cluster removed from the fleet) and the function may
legitimately let a resource go. Without a reader, no loss is ever allowed.

Deterministic: a seed and an iteration name one mutation on every machine and in
every process, whatever else runs, so a run can be cut into parts (`part`,
`parts`) that check disjoint iterations of the same `count` and together check
exactly what one whole run checks; a failure names the seed, the iteration and
the mutation, and that iteration replays alone.
"""

import asyncio
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from modelplane.xfn.runner import ComposeFunction
from modelplane.xfn.structs import to_dict, to_struct
from modelplane_dev.fuzz.mutate import Obj, garbage, mutate

COMPOSITE = "composite"
OBSERVED = "observed"


class Runner(Protocol):
    async def RunFunction(  # noqa: N802 (the gRPC method name)
        self, request: fnv1.RunFunctionRequest, context: Any, /
    ) -> fnv1.RunFunctionResponse: ...


@dataclass(frozen=True)
class Mutated:
    """One mutated request: which part changed, how, and the part as it now is."""

    request: fnv1.RunFunctionRequest
    part: str
    """`composite`, `observed`, or the requirement's name."""
    where: str
    """The composite, `observed[key]` or `<requirement>[i]`."""
    what: str
    obj: Obj | None
    """The mutated object; None when the mutation removed it."""

    def describe(self) -> str:
        return f"{self.where} {self.what}"


def run_function(runner: Runner, req: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """Call a Modelplane function's RunFunction body directly, with no event loop or
    worker thread (what its RunFunction runs in a thread); any other runner through
    asyncio."""
    if isinstance(runner, ComposeFunction):
        return runner.run_function(req)
    return asyncio.run(runner.RunFunction(req, None))


def final_response(
    runner: Runner,
    req: fnv1.RunFunctionRequest,
    *,
    world: fnv1.RunFunctionRequest | None = None,
    limit: int = 5,
) -> fnv1.RunFunctionResponse:
    """The response Crossplane v2.3's fetch loop keeps (`FetchingFunctionRunner.
    RunFunction`) in a world holding only the objects `req`'s fetched lists carry: a
    requirement `req` has a list for is answered with that list, as it is; any other
    from those objects (`_world`, `_select`), as the API server would.

    Calls again while the requirements differ from the previous call's (none before
    the first), as Crossplane does, `limit` calls at most; a call the loop does not
    keep must answer its requirements alone (AssertionError otherwise). `world`, when
    given, is the request whose lists stand for the world instead of `req`'s."""
    source = world if world is not None else req
    current = _copy(req)
    previous: fnv1.Requirements | None = None
    for _ in range(limit):
        rsp = run_function(runner, current)
        if any(r.severity == fnv1.SEVERITY_FATAL for r in rsp.results):
            return rsp
        asked = rsp.requirements if rsp.HasField("requirements") else None
        if asked == previous:
            return rsp
        if any(name not in current.required_resources for name in rsp.requirements.resources):
            # Requirements and context only: the desired state it was handed, unchanged.
            discarded = (rsp.conditions, rsp.results)
            assert not any(discarded) and rsp.desired == current.desired, (
                "a call lacking a required key answers requirements only"
            )
        previous = asked
        objects = _world(source, asked)
        current.ClearField("required_resources")
        selectors = dict(asked.resources) if asked is not None else {}
        for name in sorted(selectors):
            found = current.required_resources[name]
            found.SetInParent()
            if name in source.required_resources:
                found.CopyFrom(source.required_resources[name])
                continue
            selector = selectors[name]
            seen: set[tuple[str, str, str, str]] = set()
            for kind, item in objects:
                key = _identity(item.resource)
                if key in seen or kind != (selector.api_version, selector.kind):
                    continue
                if _select(selector, item.resource):
                    seen.add(key)
                    found.items.add().CopyFrom(item)
        current.context.CopyFrom(rsp.context)
    raise AssertionError(f"the requirements did not settle in {limit} calls")


def _world(
    req: fnv1.RunFunctionRequest, asked: fnv1.Requirements | None
) -> list[tuple[tuple[str, str], fnv1.Resource]]:
    """Every object `req`'s lists carry, with the kind it is stored as: the kind its
    list was asked for by (a mutated object's own apiVersion may be garbage), else
    its own."""
    world: list[tuple[tuple[str, str], fnv1.Resource]] = []
    for name in sorted(req.required_resources):
        for item in req.required_resources[name].items:
            if asked is not None and name in asked.resources:
                selector = asked.resources[name]
                kind = (selector.api_version, selector.kind)
            else:
                kind = _identity(item.resource)[:2]
            world.append((kind, item))
    return world


def _fields(struct: struct_pb2.Struct, name: str) -> dict[str, struct_pb2.Value]:
    value = struct.fields.get(name)
    if value is None or value.WhichOneof("kind") != "struct_value":
        return {}
    return dict(value.struct_value.fields)


def _text(fields: Mapping[str, struct_pb2.Value], name: str) -> str:
    value = fields.get(name)
    return value.string_value if value is not None else ""


def _identity(obj: struct_pb2.Struct) -> tuple[str, str, str, str]:
    """apiVersion, kind, namespace and name, each "" where unreadable."""
    metadata = _fields(obj, "metadata")
    top = dict(obj.fields)
    namespace, name = _text(metadata, "namespace"), _text(metadata, "name")
    return (_text(top, "apiVersion"), _text(top, "kind"), namespace, name)


def _select(selector: fnv1.ResourceSelector, obj: struct_pb2.Struct) -> bool:
    """Whether the API server would answer `selector`, of the kind `obj` is stored
    as, with `obj`: by namespace, name and labels."""
    _, _, namespace, name = _identity(obj)
    if selector.HasField("namespace") and selector.namespace != namespace:
        return False
    if selector.WhichOneof("match") == "match_name":
        return selector.match_name == name
    if selector.WhichOneof("match") == "match_labels":
        metadata = obj.fields.get("metadata")
        labels = (
            _fields(metadata.struct_value, "labels")
            if metadata is not None and metadata.WhichOneof("kind") == "struct_value"
            else {}
        )
        wanted = selector.match_labels.labels
        return all(k in labels and _text(labels, k) == v for k, v in wanted.items())
    return True


def _copy(base: fnv1.RunFunctionRequest) -> fnv1.RunFunctionRequest:
    req = fnv1.RunFunctionRequest()
    req.CopyFrom(base)
    return req


class Mutator:
    """Mutated copies of one valid request, each changing one part."""

    def __init__(self, base: fnv1.RunFunctionRequest) -> None:
        self._base = base
        self._composite = to_dict(base.observed.composite.resource)
        self._observed = {
            k: to_dict(v.resource) for k, v in sorted(base.observed.resources.items())
        }
        self._required = {
            name: [to_dict(item.resource) for item in found.items]
            for name, found in sorted(base.required_resources.items())
        }

    def mutated(self, rng: random.Random) -> Mutated:
        targets = [COMPOSITE, COMPOSITE] + [f"{OBSERVED}:{k}" for k in self._observed]
        targets += [f"required:{name}" for name in self._required]
        target = rng.choice(targets)
        req = _copy(self._base)
        if target == COMPOSITE:
            obj, what = mutate(self._composite, rng)
            req.observed.composite.resource.CopyFrom(to_struct(obj))
            return Mutated(req, COMPOSITE, COMPOSITE, what, obj)
        kind, _, name = target.partition(":")
        if kind == OBSERVED:
            obj, what = mutate(self._observed[name], rng)
            req.observed.resources[name].resource.CopyFrom(to_struct(obj))
            return Mutated(req, OBSERVED, f"observed[{name}]", what, obj)
        return self._required_item(req, name, rng)

    def _required_item(
        self, req: fnv1.RunFunctionRequest, name: str, rng: random.Random
    ) -> Mutated:
        items = list(self._required[name])
        choice = rng.random()
        index = rng.randrange(len(items)) if items else 0
        obj: Obj | None
        if not items or choice < 0.1:
            obj, what = garbage(rng), "garbage added"
            items.insert(index, obj)
        elif choice < 0.2:
            obj, what = None, "removed"
            del items[index]
        elif choice < 0.25:
            obj, what = items[index], "duplicated"
            items.insert(index, obj)
        else:
            obj, what = mutate(items[index], rng)
            items[index] = obj
        found = req.required_resources[name]
        del found.items[:]
        for item in items:
            found.items.add().resource.CopyFrom(to_struct(item))
        return Mutated(req, name, f"{name}[{index}]", what, obj)


@dataclass(frozen=True)
class Failure:
    seed: int
    iteration: int
    mutation: str
    problem: str

    def __str__(self) -> str:
        return f"seed {self.seed} #{self.iteration}: {self.mutation}: {self.problem}"


Reader = Callable[[Obj], object]
"""Reads an object as the function does; raises when the function could not."""


def _reads(reader: Reader, obj: Obj) -> bool:
    try:
        reader(obj)
    except Exception:  # whatever the reader refuses with, the object is malformed
        return False
    return True


def mutation(mutators: Sequence[Mutator], seed: int, iteration: int) -> Mutated:
    """Iteration `iteration` of the run `seed`: its own random stream (a string seed
    is hashed the same in every process), so it depends on nothing run before it."""
    rng = random.Random(f"{seed}/{iteration}")
    return rng.choice(mutators).mutated(rng)


class Fuzzer:
    """Runs mutated requests through one function and collects every broken promise.

    `readers` maps a request part (`composite`, `observed`, or a requirement's
    name, where `name/anything` is read as `name` is: one family of lists) to how
    the function reads its objects; a mutation its reader still
    accepts is a valid edit, and may let a composed resource go.
    """

    def __init__(self, runner: Runner, readers: Mapping[str, Reader] | None = None) -> None:
        self._runner = runner
        self._readers = dict(readers or {})

    def may_drop(self, mutated: Mutated) -> bool:
        reader = self._readers.get(mutated.part) or self._readers.get(mutated.part.split("/", 1)[0])
        if reader is None:
            return False
        return mutated.obj is None or _reads(reader, mutated.obj)

    def check(self, mutated: Mutated) -> str | None:
        """What broke, or None when the function kept every promise."""
        try:
            # The answer Crossplane keeps: a mutation may change what is asked for.
            rsp = final_response(self._runner, mutated.request)
        except Exception as error:  # the whole point: nothing may escape
            return f"RunFunction raised {type(error).__name__}: {error}"
        fatal = [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        if fatal:
            return f"fatal result {fatal[0].reason}: {fatal[0].message}"
        lost = sorted(set(mutated.request.observed.resources) - set(rsp.desired.resources))
        if lost and not self.may_drop(mutated):
            return f"stopped emitting {', '.join(lost)}"
        return None

    def run(
        self,
        requests: Sequence[fnv1.RunFunctionRequest],
        *,
        seed: int,
        count: int,
        part: int = 0,
        parts: int = 1,
    ) -> list[Failure]:
        """`count` mutations spread over `requests`, each named by `seed` and its
        iteration; of those, the iterations `part` modulo `parts` (every one by
        default), so that `parts` tests, one per part, share one run's work."""
        if not 0 <= part < parts:
            raise ValueError(f"part {part} is not one of {parts} parts")
        mutators = [Mutator(req) for req in requests]
        failures: list[Failure] = []
        for iteration in range(part, count, parts):
            mutated = mutation(mutators, seed, iteration)
            problem = self.check(mutated)
            if problem is not None:
                failures.append(Failure(seed, iteration, mutated.describe(), problem))
        return failures


def applied_elsewhere(provider: str) -> Reader:
    """A reader of observed Objects for a function that keys a hub's objects by the
    hub (`modelplane.traffic.hubs`): an Object that reads as applied through another
    ProviderConfig than `provider` says its composite moved, which lets the old
    hub's objects go; any other mutation of an observed Object must keep them."""

    def read(obj: Obj) -> object:
        spec = obj.get("spec")
        ref = spec.get("providerConfigRef") if isinstance(spec, dict) else None
        name = ref.get("name") if isinstance(ref, dict) else None
        if not isinstance(name, str) or not name or name == provider:
            raise ValueError("not applied through another ProviderConfig")
        return name

    return read
