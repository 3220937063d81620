"""Condition types Crossplane reserves never reach a composite from a function.

Crossplane's composite reconciler skips a function's condition whose type is a
system type (`IsSystemConditionType`: Ready, Synced, Healthy, UpToDate, and
Responsive on composites); `render` does the same, so a preview never shows a
condition a control plane would drop.
"""

from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from crossplane.function import resource, response

from modelplane.core.vocabulary import RESERVED_CONDITION_TYPES
from modelplane_cli.render.pipeline import Condition
from modelplane_cli.render.reconcile import drop_reserved_conditions

from .support import PlatformRunner, default_runners, one, render_text

PLATFORM = """
apiVersion: example.org/v1
kind: XPlatform
metadata: {name: east}
spec: {region: us-east-1}
"""


def test_crossplanes_reserved_types_are_the_vocabularys() -> None:
    assert {"Ready", "Synced", "Healthy", "UpToDate", "Responsive"} == RESERVED_CONDITION_TYPES


@pytest.mark.parametrize("reserved", sorted(RESERVED_CONDITION_TYPES))
def test_a_reserved_type_is_dropped_and_the_others_kept_in_order(reserved: str) -> None:
    first = Condition("Reachable", "False", "ClusterUnreachable")
    dropped = Condition(reserved, "False", "Whatever")
    last = Condition("Valid", "True", "Valid")
    assert drop_reserved_conditions([first, dropped], [dropped, last]) == [first, last]


class ReservingPlatform(PlatformRunner):
    """Sets every reserved condition type False, and one of its own."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        response.set_conditions(
            rsp,
            *(
                resource.Condition(typ=t, status="False", reason="SetByFunction")
                for t in sorted(RESERVED_CONDITION_TYPES)
            ),
            resource.Condition(typ="Reachable", status="False", reason="ClusterUnreachable"),
        )


def test_the_engine_drops_reserved_types_from_function_results(apis_dir: Path) -> None:
    runners = {**default_runners(), "fn-platform": ReservingPlatform()}
    result = render_text(apis_dir, PLATFORM, runners)

    assert result.ok, result.errors
    conditions = {c["type"]: c for c in one(result, "XPlatform")["status"]["conditions"]}
    # Only Crossplane's own Ready, Synced and Responsive, as Crossplane sets them, and
    # the custom one.
    assert sorted(conditions) == ["Reachable", "Ready", "Responsive", "Synced"]
    responsive = conditions["Responsive"]
    assert (responsive["status"], responsive["reason"]) == ("True", "WatchCircuitClosed")
    assert (conditions["Ready"]["status"], conditions["Ready"]["reason"]) == ("True", "Available")
    assert conditions["Synced"]["reason"] == "ReconcileSuccess"
    assert conditions["Reachable"]["status"] == "False"
