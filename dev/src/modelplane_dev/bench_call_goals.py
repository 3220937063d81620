"""`modelplane bench call`'s issue-28 goals: each figure a run measured against its limit."""

from typing import Any

from modelplane.core.vocabulary import Reason
from modelplane_dev import bench_goals, bench_server

STEADY_GOAL_MS = {1000: 50.0}
"""The steady call's goal (Go-order bytes, one pool grown), by clusters."""
FIRST_CALL_GOAL_CLUSTERS = 10_000
"""The fleet whose first call must complete within Crossplane's deadline."""
RESPONSE_LIMIT = bench_server.CLIENT_RECEIVE_LIMIT
"""A response must stay under what Crossplane's client receives (4 MiB)."""
WORKERS_GOAL_RATIO = 1.5
"""Throughput on two workers over one, with concurrent callers: growing with cores."""
CEL_STOPS = (Reason.CEL_BUDGET_EXCEEDED.encode(), b"evaluation time limit exceeded")
"""What a response says when a decision's CEL ran out of units or (a lone
evaluation's backstop) time: on the bench fleet, whose work is bounded, any is a bug."""


def cel_stops(answer: bytes) -> int:
    """1 when the response says a CEL budget or deadline stopped a decision, else 0."""
    return int(any(marker in answer for marker in CEL_STOPS))


def goal_lines(result: dict[str, Any]) -> list[str]:
    """The issue-28 goals this run measured, each against its limit."""
    lines: list[str] = []
    clusters = result["clusters"]
    steady_goal = STEADY_GOAL_MS.get(clusters)
    if steady_goal is not None and "steady_median_ms" in result:
        value = result["steady_median_ms"]
        lines.append(
            bench_goals.line(
                f"steady call at {clusters:,} clusters on Go-order bytes",
                f"{value} ms",
                f"<= {steady_goal:g} ms",
                value <= steady_goal,
            )
        )
    if clusters >= FIRST_CALL_GOAL_CLUSTERS:
        deadline = bench_server.CALL_DEADLINE_SECONDS
        first = result.get("first_median_ms")
        lines.append(
            bench_goals.line(
                f"first call at {clusters:,} clusters",
                f"{first} ms" if first is not None else f"failed ({result.get('error')})",
                f"<= {deadline * 1000:,.0f} ms, Crossplane's reconcile timeout",
                first is not None and first <= deadline * 1000,
            )
        )
        size = result.get("response_bytes")
        lines.append(
            bench_goals.line(
                f"first response at {clusters:,} clusters",
                f"{size:,} bytes" if size is not None else "none",
                f"< {RESPONSE_LIMIT:,} bytes",
                size is not None and size < RESPONSE_LIMIT,
            )
        )
    if "error" not in result:
        stops = result["cel_stops"]
        lines.append(
            bench_goals.line(
                f"CEL budget or deadline stops at {clusters:,} clusters",
                str(stops),
                "0",
                stops == 0,
            )
        )
    workers = result.get("workers")
    if workers is not None and "workers_ratio" in workers:
        ratio = workers["workers_ratio"]
        lines.append(
            bench_goals.line(
                f"throughput on 2 workers over 1 ({workers['callers']} callers)",
                f"{ratio}x",
                f">= {WORKERS_GOAL_RATIO}x",
                ratio >= WORKERS_GOAL_RATIO,
            )
        )
    return lines
