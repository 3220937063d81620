"""Where a decision's rollout places new replicas, and whether it looked for room.

The rollout asks for new replicas on the whole fleet (`place`: a shortfall, a surge,
a replacement for a replica that must move) or on one cluster (`place_on`: a surge
beside the outdated replica it replaces), each time against what the replicas it
keeps and every other deployment's replicas hold. `sought` records whether it asked
for any at all: a decision that never did depends only on the clusters its replicas
run on, which is what lets compose-model-deployment decide a settled deployment on
those alone (`settled.keeps`).
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modelplane.scheduling.book import CapacityBook, Contention
from modelplane.scheduling.cache import CacheView
from modelplane.scheduling.decision import RemovedReplica
from modelplane.scheduling.fill import fill, leaving, taken_identities
from modelplane.scheduling.fleet import ClusterView
from modelplane.scheduling.ledger import ChargedLedgers
from modelplane.scheduling.matching import Matcher
from modelplane.scheduling.model import Deployment, ExistingReplica
from modelplane.scheduling.retain import Kept
from modelplane.scheduling.rollout import Placed


@dataclass(kw_only=True)
class Placers:
    """One decision's placers (`rollout.Placer`, `rollout.LocalPlacer`)."""

    deployment: Deployment
    views: Mapping[str, ClusterView]
    own: Sequence[ExistingReplica]
    others: Sequence[ExistingReplica]
    removed: list[RemovedReplica]
    """The decision's removals so far: the list grows as the rollout retires replicas."""
    matcher: Matcher
    contention: Contention | None
    charged: ChargedLedgers
    cache: CacheView | None
    named: Callable[[str, int], str]
    sought: bool = False

    def place(self, keep: Sequence[Kept], count: int) -> Placed:
        """Up to `count` new replicas anywhere in the fleet."""
        self.sought = self.sought or count > 0
        book, taken = self._book(keep)
        return fill(self.deployment, self.views, keep, book, count, self.named, self.cache, taken)

    def place_on(self, keep: Sequence[Kept], count: int, cluster: str) -> Placed:
        """Up to `count` new replicas on `cluster` alone."""
        self.sought = self.sought or count > 0
        view = self.views.get(cluster)
        if view is None or not view.eligible:
            return [], {}
        book, taken = self._book(keep)
        return fill(self.deployment, {cluster: view}, keep, book, count, self.named, taken=taken)

    def _book(self, keep: Sequence[Kept]) -> tuple[CapacityBook, set[tuple[str, int]]]:
        going = leaving(self.own, self.removed)
        holders = (
            sorted([*self.others, *going], key=lambda r: (r.namespace, r.name))
            if going
            else self.others
        )
        book = CapacityBook(self.views, keep, holders, self.matcher, self.contention, self.charged)
        taken = taken_identities(self.deployment.namespace, self.own, holders, self.named)
        return book, taken
