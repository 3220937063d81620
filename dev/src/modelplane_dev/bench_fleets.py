"""Seeded, deliberately hard fleets for `modelplane bench placement`.

Two families (`SHAPES`, chosen by `--shapes`). In both, each fleet is a few
clusters of small pools, tight enough that deployments compete.

The `general` family: single-kind nodes of 1, 4, 6 and 8 GPUs, nodes carrying two GPU kinds
of one device class (DRA may allocate either) or of two classes (the claim
picks one), InfiniBand next to GPUs as a Synthetic device, pods of 1 to 8 GPUs
including 3, 5 and 6 (which do not divide an 8-GPU node), multi-node workers,
disaggregated deployments, and pools prefilled by running replicas. Every even
seed is built from scarce mixes: plain 8-GPU nodes beside a few with InfiniBand
NICs, the only second GPU kind on a multi-kind node, more arrivals needing the
NICs, and half of them disaggregated.

The `scarce` family (`SHAPES`) is built so that ranking pools by their GPUs alone
loses: most nodes are plain 8-GPU nodes of the larger GPU, a few carry the
smaller GPU with InfiniBand NICs or the fleet's only Ada GPUs beside Hopper
ones (so by GPUs and memory alone they look the least capable), and the
deployments that need none of that arrive first, with pods of 3, 5 and 6 GPUs
and many disaggregated, while those needing the NICs or the Ada GPUs arrive
last. Everything is built straight as the scheduler's inputs; the same seed
gives the same fleet.
"""

import random
from dataclasses import dataclass

from modelplane.core.devices import Claim, DeviceSpec
from modelplane.core.topology import Topology
from modelplane.scheduling import (
    DECODE_ROLE,
    PREFILL_ROLE,
    UNIFIED_ROLE,
    Cluster,
    Deployment,
    DeviceRequest,
    Pool,
    PoolHardware,
    Role,
)

GPU_DRIVER = "gpu.nvidia.com"
NAMESPACE = "bench"


def _gpu(
    count: int, arch: str, memory: str, *, name: str = "gpu", device_class: str = GPU_DRIVER
) -> DeviceSpec:
    return DeviceSpec(
        name=name,
        claim=Claim.DRA,
        driver=GPU_DRIVER,
        device_class_name=device_class,
        count=count,
        attributes=(("architecture", "string", arch),),
        capacity=(("memory", memory),),
    )


_NIC = DeviceSpec(
    name="nic",
    claim=Claim.SYNTHETIC,
    driver="nic.nvidia.com",
    device_class_name=None,
    count=8,
    attributes=(("linkType", "string", "infiniband"),),
)

NODE_SHAPES: dict[str, PoolHardware] = {
    "l4": PoolHardware((_gpu(1, "Ada Lovelace", "23034Mi"),)),
    "l40s": PoolHardware((_gpu(4, "Ada Lovelace", "46068Mi"),)),
    "mi6": PoolHardware((_gpu(6, "Hopper", "81559Mi"),)),
    "h100": PoolHardware((_gpu(8, "Hopper", "81559Mi"), _NIC)),
    "h200": PoolHardware((_gpu(8, "Hopper", "143771Mi"),)),
    # The same GPUs without the InfiniBand NICs: beside "h100", the NIC nodes are scarce.
    "h100plain": PoolHardware((_gpu(8, "Hopper", "81559Mi"),)),
    # Two GPU kinds on one node: the only Ada next to Hopper, one device class.
    "hopada": PoolHardware(
        (_gpu(4, "Hopper", "81559Mi", name="hop"), _gpu(4, "Ada Lovelace", "46068Mi", name="ada"))
    ),
    # Two kinds of one class: a claim may be allocated either.
    "mixed": PoolHardware(
        (_gpu(4, "Hopper", "143771Mi", name="big"), _gpu(4, "Hopper", "81559Mi", name="small"))
    ),
    # Two kinds of two classes: the claim names one.
    "dual": PoolHardware(
        (
            _gpu(4, "Hopper", "81559Mi", name="full"),
            _gpu(4, "Hopper", "81559Mi", name="shared", device_class="shared.nvidia.com"),
        )
    ),
}

SELECTORS = {
    "any": f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("20Gi")) >= 0',
    "hopper": f'device.attributes["{GPU_DRIVER}"].architecture == "Hopper"',
    "big": f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("80Gi")) >= 0',
    "huge": f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("140Gi")) >= 0',
    "ada": f'device.attributes["{GPU_DRIVER}"].architecture == "Ada Lovelace"',
}
IB = 'device.attributes["nic.nvidia.com"].linkType == "infiniband"'


@dataclass(frozen=True)
class BenchFleet:
    """One seeded fleet: its clusters, the deployments already running (prefill), and
    the deployments that arrive, in order."""

    seed: int
    clusters: tuple[Cluster, ...]
    prefill: tuple[Deployment, ...]
    arrivals: tuple[Deployment, ...]


SCARCE_SHAPES = ("h100plain", "h100", "hopada", "l40s", "mi6", "h200")
"""The scarce fleets' node shapes: plain 8-GPU nodes beside a few NIC-bearing ones, the
only second GPU kind on multi-kind nodes, and pods that do not divide the node."""


def _role(rng: random.Random, name: str, scarce: bool = False) -> Role:
    gpus = rng.choice([1, 1, 2, 3, 4, 4, 5, 6, 8, 8])
    selector = rng.choice(["any", "any", "hopper", "big", "huge", "ada"])
    requests = [DeviceRequest("gpu", gpus, (SELECTORS[selector],))]
    extra = rng.random()
    if extra < (0.25 if scarce else 0.1):
        requests.append(DeviceRequest("fabric", 8, (IB,)))
    elif extra < 0.2 and gpus <= 4:
        requests.append(DeviceRequest("more", rng.choice([1, 2]), (SELECTORS["hopper"],)))
    pipeline = rng.choice([1, 1, 1, 2])
    workers = rng.choice([1, 1, 2])
    return Role(name, tuple(requests), workers, Topology(tensor=gpus, pipeline=pipeline))


def _deployment(rng: random.Random, name: str, replicas: int, scarce: bool = False) -> Deployment:
    if rng.random() < (0.5 if scarce else 0.25):
        roles = (_role(rng, DECODE_ROLE, scarce), _role(rng, PREFILL_ROLE, scarce))
    else:
        roles = (_role(rng, UNIFIED_ROLE, scarce),)
    return Deployment(name, NAMESPACE, replicas, roles)


def _general(seed: int) -> BenchFleet:
    """Odd seeds: the general mix. Even seeds: scarce hardware mixes (`SCARCE_SHAPES`),
    more arrivals needing InfiniBand, and half of them disaggregated."""
    rng = random.Random(seed)
    scarce = seed % 2 == 0
    clusters: list[Cluster] = []
    for c in range(rng.randint(2, 4)):
        if scarce:
            shapes = ["h100plain", *rng.sample(SCARCE_SHAPES[1:], rng.randint(1, 2))]
        else:
            shapes = rng.sample(
                sorted(set(NODE_SHAPES) - {"h100plain", "hopada"}), rng.randint(1, 3)
            )
        pools = tuple(
            Pool(shape, f"{shape}-class", rng.randint(1, 4), NODE_SHAPES[shape]) for shape in shapes
        )
        clusters.append(
            Cluster(f"c{c}", {}, pools, declared_pools=frozenset(p.name for p in pools))
        )
    prefill = tuple(
        _deployment(rng, f"running{i}", rng.randint(1, 2), scarce) for i in range(rng.randint(0, 3))
    )
    arrivals = tuple(
        _deployment(rng, f"d{i}", rng.randint(1, 4), scarce) for i in range(rng.randint(4, 8))
    )
    return BenchFleet(seed, tuple(clusters), prefill, arrivals)


def _scarce_role(rng: random.Random, name: str, needs: str) -> Role:
    """A role needing nothing scarce (`plain`), the InfiniBand NICs (`ib`) or Ada GPUs."""
    if needs == "ib":
        gpus = rng.choice([4, 8, 8])
        requests = (
            DeviceRequest("gpu", gpus, (SELECTORS["hopper"],)),
            DeviceRequest("fabric", 8, (IB,)),
        )
    elif needs == "ada":
        gpus = rng.choice([2, 3, 4])
        requests = (DeviceRequest("gpu", gpus, (SELECTORS["ada"],)),)
    else:
        gpus = rng.choice([2, 3, 4, 5, 6, 8])
        requests = (DeviceRequest("gpu", gpus, (SELECTORS[rng.choice(["any", "hopper"])],)),)
    return Role(name, requests, 1, Topology(tensor=gpus))


def _scarce_deployment(rng: random.Random, name: str, needs: str) -> Deployment:
    replicas = rng.randint(1, 3)
    if rng.random() < 0.4:
        # The decode role needs what the deployment needs; its prefill role, nothing scarce.
        roles = (_scarce_role(rng, DECODE_ROLE, needs), _scarce_role(rng, PREFILL_ROLE, "plain"))
    else:
        roles = (_scarce_role(rng, UNIFIED_ROLE, needs),)
    return Deployment(name, NAMESPACE, replicas, roles)


def _scarce(seed: int) -> BenchFleet:
    rng = random.Random(seed)
    clusters: list[Cluster] = []
    count = rng.randint(2, 4)
    # Every fleet has NIC nodes and Ada nodes somewhere, on few clusters.
    nic_on = set(rng.sample(range(count), rng.randint(1, 2)))
    ada_on = set(rng.sample(range(count), 1))
    for c in range(count):
        # Listed by name, as a class's pools usually are: the scarce ones come first.
        shapes = [
            *(["h100"] if c in nic_on else []),
            "h200",
            *(["hopada"] if c in ada_on else []),
        ]
        pools = tuple(
            Pool(
                shape,
                f"{shape}-class",
                rng.randint(1, 2) if shape != "h200" else rng.randint(2, 3),
                NODE_SHAPES[shape],
            )
            for shape in shapes
        )
        clusters.append(
            Cluster(f"c{c}", {}, pools, declared_pools=frozenset(p.name for p in pools))
        )
    prefill = tuple(
        _scarce_deployment(rng, f"running{i}", "plain") for i in range(rng.randint(0, 1))
    )
    early = [_scarce_deployment(rng, f"d{i}", "plain") for i in range(rng.randint(3, 5))]
    late = [
        _scarce_deployment(rng, f"d{len(early) + i}", rng.choice(["ib", "ib", "ada"]))
        for i in range(rng.randint(2, 3))
    ]
    return BenchFleet(seed, tuple(clusters), prefill, (*early, *late))


SHAPES = {"general": _general, "scarce": _scarce}
"""The fleet families `--shapes` names."""


def fleet(seed: int, shapes: str = "general") -> BenchFleet:
    """The fleet of `seed` in the family `shapes` (`SHAPES`)."""
    return SHAPES[shapes](seed)
