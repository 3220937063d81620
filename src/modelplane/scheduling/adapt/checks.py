"""What more than one reader checks: a composite's name, a worker's topology."""

from modelplane_models.shapes import Topology as TopologyFields

from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.labels import value_error
from modelplane.core.naming import is_dns_subdomain
from modelplane.core.topology import Topology


def object_name(name: str | None, path: str, problems: list[Issue]) -> str:
    """A composite's name. It becomes a label value on every replica (Crossplane also
    labels composed resources with it), so it must be one: at most 63 characters."""
    if not name:
        problems.append(Issue(path, "is required"))
        return ""
    if not is_dns_subdomain(name) or value_error(name) is not None:
        problems.append(Issue(path, f"{name!r} must be a DNS subdomain of at most 63 characters"))
    return name


def topology(fields: TopologyFields | None, path: str, problems: list[Issue]) -> Topology:
    """The topology at `path`, each problem added to `problems` (a default one then)."""
    try:
        return Topology.read(fields, path)
    except InvalidInputError as invalid:
        problems.extend(invalid.issues)
        return Topology()
