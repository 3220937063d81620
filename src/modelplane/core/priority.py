"""Which PriorityClass a replica's pods carry."""


def resolve_priority(requested: str | None, cluster_default: str | None) -> str | None:
    """The deployment's own priority wins; else the cluster default; else none."""
    return requested or cluster_default or None


def priority_allowed(resolved: str | None, allowed: list[str] | None) -> bool:
    """Whether a cluster's allow-list admits the resolved priority.

    An empty or absent list allows everything. With a list, a replica that
    resolves to no priority at all is admitted: it carries no priorityClassName,
    so it runs at the cluster's global default and escalates nothing.
    """
    if not allowed or resolved is None:
        return True
    return resolved in allowed
