"""A seed names one sequence of mutations, whatever order an object's maps list their keys in."""

import random
from typing import Any

from modelplane_dev.fuzz.mutate import mutate

SAMPLE: dict[str, Any] = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelDeployment",
    "metadata": {"name": "llama", "namespace": "ml", "labels": {"team": "a", "tier": "gold"}},
    "spec": {
        "replicas": 2,
        "template": {"containers": [{"name": "engine", "image": "vllm", "args": ["--port"]}]},
        "selector": {"zone": "eu", "gpu": "h100", "arch": "hopper"},
    },
}


def reversed_maps(value: Any) -> Any:
    """`value` with every map's keys inserted in reverse order: equal, listed otherwise."""
    if isinstance(value, dict):
        items = list(value.items())
        return {key: reversed_maps(item) for key, item in reversed(items)}
    if isinstance(value, list):
        return [reversed_maps(item) for item in value]
    return value


def test_the_same_seed_mutates_an_equal_object_alike_whatever_its_maps_key_order() -> None:
    other = reversed_maps(SAMPLE)
    assert other == SAMPLE and list(other) != list(SAMPLE)
    became_lists = 0
    for seed in range(400):
        mutated, what = mutate(SAMPLE, random.Random(seed))
        again, what_again = mutate(other, random.Random(seed))
        assert (mutated, what) == (again, what_again), seed
        became_lists += what.endswith("map -> list")
    # The map-to-list mutation, the one that reads a map's order, is among them.
    assert became_lists > 5
