"""Which provider-kubernetes Objects are watched (`spec.watch: true`).

provider-kubernetes re-reads an up-to-date Object only every `--poll` (10 minutes)
unless the Object is watched; an Object whose remote status a decision waits on
(a workload, a Gateway, an HTTPRoute, a prerequisite observer) is watched, and
one that is ready once created is not.
"""

from typing import Any

import pytest

from modelplane.xfn import objects

PC = {"kind": "ClusterProviderConfig", "name": "east"}
DERIVED = {"policy": "DeriveFromCelQuery", "celQuery": "true"}
SHARED = ("Observe", "Create", "Update", "LateInitialize")


@pytest.mark.parametrize(
    ("readiness", "policies", "watched"),
    [
        (None, ("*",), False),
        ({"policy": "SuccessfulCreate"}, ("*",), False),
        ({"policy": "SuccessfulCreate"}, SHARED, False),
        (DERIVED, ("*",), True),
        ({"policy": "DeriveFromObject"}, ("*",), True),
        ({"policy": "AllTrue"}, ("*",), True),
        (None, objects.OBSERVE_ONLY, True),
        (DERIVED, SHARED, True),
    ],
)
def test_an_object_is_watched_when_its_remote_status_is_waited_on(
    readiness: dict[str, Any] | None, policies: tuple[str, ...], watched: bool
) -> None:
    obj = objects.wrap("o", {"kind": "ConfigMap"}, PC, readiness, management_policies=policies)
    assert objects.watched(readiness, policies) is watched
    assert obj["spec"].get("watch", False) is watched
    # Never written as false: the CRD's default, and absent keeps the manifest short.
    assert obj["spec"].get("watch") in (None, True)
