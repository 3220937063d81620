"""Under which keys a composite puts its objects on a hub cluster, so that moving it
to another hub deletes what it left on the old one.

provider-kubernetes reaches the cluster an Object's current `providerConfigRef`
names and keeps no record of the one it reached before: an Object whose
ProviderConfig changes creates its manifest on the new cluster and never deletes
it from the old. A ModelService whose `spec.gatewayRef` names a gateway on another
hub cluster, or an InferenceGateway whose `spec.clusterRef` changes, would leave its
route, backends or Gateway running on the old hub, still holding its hostname.

So the hub objects of one hub go under keys of their own. Crossplane deletes an
observed composed resource that is no longer desired (through its old
ProviderConfig), and creates the desired ones under new keys. A move is
make-before-break: what runs on the old hub is kept as it runs (`left_behind`) until
what the composite composes on the new one serves, and then no longer emitted, so
Crossplane deletes it there.

The keys stay plain (`route`) for the hub a composite is on when nothing of it runs
on another: an upgrade renames nothing, and every Object keeps its name. Only when
plain-keyed objects run on another hub do the new hub's objects go under
`<key>@<cluster>`, and they stay there while the composite stays; its next move
goes back to plain keys, which the hub it leaves no longer uses.
"""

from collections.abc import Mapping
from typing import Final

SEPARATOR: Final = "@"


def hub_suffix(observed: Mapping[str, str | None], provider: str, cluster: str) -> str:
    """The suffix of the keys of this hub's objects ("" or `@<cluster>`). `observed`
    maps each observed composed resource's key to the name of the ProviderConfig it
    was applied through (None where unreadable: never taken as elsewhere); `provider`
    and `cluster` name the hub's now."""
    mine = f"{SEPARATOR}{cluster}"
    if any(key.endswith(mine) for key in observed):
        return mine
    elsewhere = any(
        SEPARATOR not in key and ref is not None and ref != provider
        for key, ref in observed.items()
    )
    return mine if elsewhere else ""


def left_behind(observed: Mapping[str, str | None], provider: str) -> set[str]:
    """The keys of observed objects applied through another ProviderConfig than `provider`:
    what a composite left on the hub it moved from. A move is make-before-break: the
    caller keeps them, as they run, until what it composes on its new hub serves (a
    ModelService's route accepted, an InferenceGateway's Gateway programmed), and then
    stops emitting them, so Crossplane deletes them through their own ProviderConfig."""
    return {key for key, ref in observed.items() if ref is not None and ref != provider}
