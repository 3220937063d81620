"""The cost floor against cel-go's estimate, figure by figure (checker/cost.go)."""

import pytest

from modelplane.cel.environment import parse
from modelplane.cel.estimate import cost_floor

_LEVEL5 = 455_551
"""cel-go's estimate of five `all`s nested over ten-element list literals."""


def _nested(levels: int) -> str:
    expression = "true"
    for level in range(levels):
        expression = f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x{level}, {expression})"
    return expression


@pytest.mark.parametrize(
    ("expression", "floor", "cel_go"),
    [
        # The range literal (10), the result identifier (1), and per iteration the
        # loop condition `@not_strictly_false(accu)` (2) and step `accu && p` (1).
        ("[1, 2, 3].all(x, true)", 20, 20),
        # `@not_strictly_false(!accu)` (3), `accu || p` (1).
        ("[1, 2, 3].exists(x, true)", 23, 23),
        # Condition `true` (0), step `p ? accu + 1 : accu` (2); cel-go also charges
        # the result's `==`, which this leaves out.
        ("[1, 2, 3].exists_one(x, true)", 17, 18),
        # The accumulator's empty list (10), per iteration `accu + [t]` (1 + 1 + 10).
        ("[1, 2, 3].map(x, 1)", 57, 57),
        # Per iteration `p ? accu + [x] : accu` (13).
        ("[1, 2, 3].filter(x, true)", 60, 60),
        # A map literal is created for 30.
        ("{1: 1, 2: 2}.all(k, true)", 37, 37),
        (_nested(5), _LEVEL5, _LEVEL5),
        # final-t-b F4: 333,333 when each iteration counted 1 and literals nothing.
        (f"[1, 2, 3].all(y, {_nested(5)})", 1_366_673, 1_366_673),
        # A range of unknown size counts no iteration, only the result; cel-go sizes
        # an attribute map at 32 entries and charges the selections too.
        ("device.attributes.all(k, true)", 1, 2 + 1 + 32 * 3),
    ],
)
def test_the_floor_is_at_most_cel_gos_estimate(expression: str, floor: int, cel_go: int) -> None:
    assert cost_floor(parse(expression)) == floor
    assert floor <= cel_go
