"""Which device kind each of a role's requests takes on one node: the exact search.

Requests are items and kinds are bins, with selectors deciding which bins an item
may enter, so greedy first-fit can reject a node that has a valid assignment. The
search here is depth-first over requests in decreasing count, pruned by a memo of
dead states, so a node is rejected only when no assignment exists
(`modelplane.scheduling.matching` explains what it is for).
"""

from modelplane.scheduling.constraints import Aligned
from modelplane.scheduling.ledger import Vector

ASSIGNMENT_LIMIT = 64
"""At most this many assignments are enumerated per (requests, hardware): every
alternative found is a real assignment, so a bound only costs flexibility."""


def assignments(
    candidates: list[list[int]],
    counts: list[int],
    capacity: list[int],
    aligned: Aligned | None = None,
) -> list[list[int]]:
    """Assignments of each request to one candidate kind within capacity, in search order
    (the first is what a depth-first search over the candidates' order finds first).
    With `aligned`, only assignments meeting the role's DRA constraints."""
    order = sorted(range(len(counts)), key=lambda i: (-counts[i], i))
    chosen = [-1] * len(counts)
    remaining = list(capacity)
    dead: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
    found: list[list[int]] = []

    def search(position: int) -> bool:
        """Whether some completion exists from here; records each one found."""
        if len(found) >= ASSIGNMENT_LIMIT:
            return True
        if position == len(order):
            found.append(list(chosen))
            return True
        # Under constraints what may follow depends on the kinds chosen, not only on
        # what remains, so they are part of the state.
        state = (position, tuple(remaining), tuple(chosen) if aligned else ())
        if state in dead:
            return False
        request = order[position]
        any_found = False
        for kind in candidates[request]:
            if remaining[kind] < counts[request]:
                continue
            if aligned and not aligned.admits(request, kind, chosen):
                continue
            remaining[kind] -= counts[request]
            chosen[request] = kind
            any_found = search(position + 1) or any_found
            remaining[kind] += counts[request]
            chosen[request] = -1
            if len(found) >= ASSIGNMENT_LIMIT:
                break
        if not any_found:
            dead.add(state)
        return any_found

    search(0)
    return found


def per_pod(assignment: list[int], counts: list[int], claimable: list[bool]) -> Vector:
    """What one pod takes of each kind under `assignment` (Synthetic kinds: nothing)."""
    per_kind = [0] * len(claimable)
    for count, kind in zip(counts, assignment, strict=True):
        if claimable[kind]:
            per_kind[kind] += count
    return tuple(per_kind)
