"""A cluster's `status.stack.missing`, as the scheduler reads it: who each gap keeps away."""

from collections.abc import Sequence

from modelplane_models.inference_cluster import MissingPrerequisite, Scope

from modelplane.scheduling.model import NO_GAPS, StackGaps


def _describe(entry: MissingPrerequisite) -> str:
    where = f"{entry.namespace}/{entry.name}" if entry.namespace else entry.name
    return f"{entry.kind or 'object'} {where or '(unnamed)'}"


def read_gaps(missing: Sequence[MissingPrerequisite] | None) -> StackGaps:
    """The gaps by scope. An entry with no scope keeps every replica away (the safe
    side); a Replica-scoped one (a queue only its own replicas use) keeps none."""
    if not missing:
        return NO_GAPS
    everything: list[str] = []
    multi_node: list[str] = []
    device_classes: dict[str, str] = {}
    priorities: dict[str, str] = {}
    namespaces: dict[str, list[str]] = {}
    for entry in missing:
        what = _describe(entry)
        scope = entry.scope
        if scope is Scope.MULTI_NODE:
            multi_node.append(what)
        elif scope is Scope.DEVICE_CLASS and entry.name:
            device_classes[entry.name] = what
        elif scope is Scope.PRIORITY and entry.name:
            priorities.setdefault(entry.name, what)
        elif scope is Scope.NAMESPACE and entry.tenant:
            namespaces.setdefault(entry.tenant, []).append(what)
        elif scope is not Scope.REPLICA:
            everything.append(what)
    return StackGaps(
        everything=tuple(sorted(everything)),
        multi_node=tuple(sorted(multi_node)),
        device_classes=dict(sorted(device_classes.items())),
        priorities=dict(sorted(priorities.items())),
        namespaces={k: tuple(sorted(v)) for k, v in sorted(namespaces.items())},
    )
