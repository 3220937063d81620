"""Why a cluster had no room for one more replica of a decision: the rejection
`fill` records for it, per pool and per role, and the note a replica placed by
displacing others carries."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from modelplane.scheduling.decision import PoolTrace
from modelplane.scheduling.fleet import ClusterView, trace_role
from modelplane.scheduling.ledger import PoolLedger, describe_demand, describe_domains
from modelplane.scheduling.model import Deployment
from modelplane.scheduling.precedence import Standing
from modelplane.scheduling.rejections import Rejected, Rejection


@dataclass(frozen=True)
class CapacityRejection:
    """Why a cluster could take no (more) replicas, and which of its pools were full."""

    cluster: Rejected
    pools: tuple[PoolTrace, ...]


def no_room(
    deployment: Deployment,
    view: ClusterView,
    ledgers: Mapping[str, PoolLedger],
    hosted: int,
) -> CapacityRejection:
    traces: list[PoolTrace] = []
    alone = True
    for role, options in zip(deployment.roles, view.options, strict=True):
        fits_somewhere = False
        for pool, match in options:
            ledger = ledgers[pool.name]
            together = role.topology.nodes_per_worker > 1
            if any(ledger.copy().place(o.demand, role.pods, together) for o in match.options):
                fits_somewhere = True
                continue
            # The devices are free, just not in one NVLink domain: say so.
            if (
                together
                and ledger.domains
                and any(ledger.copy().place(o.demand, role.pods) for o in match.options)
            ):
                traces.append(
                    PoolTrace(
                        pool.name,
                        Rejection.NO_NVLINK_DOMAIN_ROOM,
                        describe_domains(ledger, role.pods),
                        trace_role(role.name),
                    )
                )
                continue
            needs = describe_demand(pool, match.demand, role.pods)
            traces.append(
                PoolTrace(
                    pool.name,
                    Rejection.INSUFFICIENT_CAPACITY,
                    f"not enough free devices: needs {needs}; {ledger.describe_free()}",
                    trace_role(role.name),
                )
            )
        alone = alone and fits_somewhere
    if alone:
        reason = Rejection.ROLES_DO_NOT_FIT_TOGETHER
        message = "its pools fit each role alone but not all roles of one replica together"
    else:
        reason = Rejection.INSUFFICIENT_CAPACITY
        message = "not enough free capacity for a replica"
    if hosted:
        message += f" (it already hosts {hosted} of this deployment's replicas)"
    return CapacityRejection(Rejected(reason, message), tuple(traces))


def taking_note(displaced: Sequence[Standing], viewer: str) -> str:
    named = ", ".join(s.describe(viewer) for s in displaced[:3]) or "replicas"
    more = f" and {len(displaced) - 3} more" if len(displaced) > 3 else ""
    return (
        f"no eligible cluster had free room, so it takes capacity from {named}{more}, "
        "not serving and of lower priority, which yield"
    )


def queue_full(view: ClusterView) -> Rejected:
    room = view.queue_room or 0
    return Rejected(
        Rejection.QUEUE_FULL,
        f"its in-cluster queue's quota left fits {room} replica{'' if room == 1 else 's'}, "
        "placed by this decision",
    )
