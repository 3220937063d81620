"""The same request with every map in another order.

With protobuf's upb backend a Struct's map iterates in an order that depends on
the process (its hash seed) and on the order keys were inserted, so a function
pod may see a map's keys in any order. `reordered` rebuilds every Struct of a
request (composite, observed, required) and the request's own maps with their
keys inserted in a seeded random order: what a function answers must not change.
"""

import random
from typing import Any, cast

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.xfn.structs import to_dict, to_struct


def shuffled(value: Any, rng: random.Random) -> Any:
    """`value` with every map's keys in a random order (lists keep theirs)."""
    if isinstance(value, dict):
        mapping = cast(dict[str, Any], value)
        keys = list(mapping)
        rng.shuffle(keys)
        return {key: shuffled(mapping[key], rng) for key in keys}
    if isinstance(value, list):
        return [shuffled(item, rng) for item in cast(list[Any], value)]
    return value


def _struct(struct: Any, rng: random.Random) -> Any:
    return to_struct(shuffled(to_dict(struct), rng))


def reordered(req: fnv1.RunFunctionRequest, rng: random.Random) -> fnv1.RunFunctionRequest:
    """A request equal to `req` in content, every map inserted in a shuffled order."""
    out = fnv1.RunFunctionRequest()
    out.CopyFrom(req)
    out.observed.resources.clear()
    out.required_resources.clear()
    out.context.CopyFrom(_struct(req.context, rng))
    out.observed.composite.resource.CopyFrom(_struct(req.observed.composite.resource, rng))
    keys = list(req.observed.resources)
    rng.shuffle(keys)
    for key in keys:
        resource = out.observed.resources[key]
        resource.CopyFrom(req.observed.resources[key])
        resource.resource.CopyFrom(_struct(req.observed.resources[key].resource, rng))
    names = list(req.required_resources)
    rng.shuffle(names)
    for name in names:
        found = out.required_resources[name]
        for item in req.required_resources[name].items:
            found.items.add().resource.CopyFrom(_struct(item.resource, rng))
    return out
