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

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.structs import to_dict, to_struct
from modelplane_dev.fuzz.fetch_loop import Runner, copied, final_response
from modelplane_dev.fuzz.mutate import Obj, Path, garbage, mutate, paths

COMPOSITE = "composite"
OBSERVED = "observed"


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


class Mutator:
    """Mutated copies of one valid request, each changing one part.

    The request of a `Mutated` is the mutator's one working copy of its base, with
    the part of the previous mutation put back and this one's changed: copying the
    whole request for every mutation cost more than most calls of the function it
    is sent to. It is therefore good until the mutator's next mutation; copy it to
    keep it (`determinism.mutated_sample` does)."""

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
        self._targets = [COMPOSITE, COMPOSITE] + [f"{OBSERVED}:{k}" for k in self._observed]
        self._targets += [f"required:{name}" for name in self._required]
        # Each base object's paths (`mutate.paths`), by its id, once it was mutated.
        self._paths: dict[int, list[Path]] = {}
        self._working: fnv1.RunFunctionRequest | None = None
        self._changed: str | None = None
        """The target the working copy differs from the base in, if any."""

    def mutated(self, rng: random.Random) -> Mutated:
        target = rng.choice(self._targets)
        req = self._restored()
        self._changed = target
        if target == COMPOSITE:
            obj, what = self._mutate(self._composite, rng)
            req.observed.composite.resource.CopyFrom(to_struct(obj))
            return Mutated(req, COMPOSITE, COMPOSITE, what, obj)
        kind, _, name = target.partition(":")
        if kind == OBSERVED:
            obj, what = self._mutate(self._observed[name], rng)
            req.observed.resources[name].resource.CopyFrom(to_struct(obj))
            return Mutated(req, OBSERVED, f"observed[{name}]", what, obj)
        return self._required_item(req, name, rng)

    def _mutate(self, obj: Obj, rng: random.Random) -> tuple[Obj, str]:
        where = self._paths.get(id(obj))
        if where is None:
            where = self._paths[id(obj)] = paths(obj)
        return mutate(obj, rng, where)

    def _restored(self) -> fnv1.RunFunctionRequest:
        """The working copy, equal to the base again."""
        if self._working is None:
            self._working = copied(self._base)
            return self._working
        req, base, changed = self._working, self._base, self._changed
        if changed == COMPOSITE:
            req.observed.composite.resource.CopyFrom(base.observed.composite.resource)
        elif changed is not None:
            kind, _, name = changed.partition(":")
            if kind == OBSERVED:
                req.observed.resources[name].resource.CopyFrom(
                    base.observed.resources[name].resource
                )
            else:
                req.required_resources[name].CopyFrom(base.required_resources[name])
        self._changed = None
        return req

    def _required_item(
        self, req: fnv1.RunFunctionRequest, name: str, rng: random.Random
    ) -> Mutated:
        # Each item is the base's (by index), sent as its resource alone, or a new object.
        objects = self._required[name]
        items: list[int | Obj] = list(range(len(objects)))
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
            obj, what = objects[index], "duplicated"
            items.insert(index, items[index])
        else:
            obj, what = self._mutate(objects[index], rng)
            items[index] = obj
        base = self._base.required_resources[name].items
        found = req.required_resources[name]
        del found.items[:]
        for item in items:
            resource = found.items.add().resource
            resource.CopyFrom(base[item].resource if isinstance(item, int) else to_struct(item))
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
        # What Crossplane observed, read before the function is handed the request.
        observed = set(mutated.request.observed.resources)
        try:
            # The answer Crossplane keeps: a mutation may change what is asked for.
            rsp = final_response(self._runner, mutated.request, deterministic=True)
        except Exception as error:  # the whole point: nothing may escape
            return f"RunFunction raised {type(error).__name__}: {error}"
        fatal = [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
        if fatal:
            return f"fatal result {fatal[0].reason}: {fatal[0].message}"
        lost = sorted(observed - set(rsp.desired.resources))
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
