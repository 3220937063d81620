"""Lists of object names in a scheduler's settings."""

from collections.abc import Sequence

from pydantic import RootModel

from modelplane.core.issues import Issue
from modelplane.core.naming import is_dns_subdomain
from modelplane.core.vocabulary import Reason


def read_names(
    value: Sequence[RootModel[str]] | None, path: str, what: str, issues: list[Issue]
) -> tuple[str, ...] | None:
    """Object names, sorted and without repeats; None when the list is absent.

    A name that is not a DNS subdomain is an error naming its index, and left out.
    """
    if value is None:
        return None
    names: set[str] = set()
    for i, item in enumerate(value):
        if not is_dns_subdomain(item.root):
            issues.append(
                Issue(
                    f"{path}[{i}]",
                    f"{item.root!r} is not a valid {what} name",
                    Reason.INVALID_SCHEDULING,
                )
            )
            continue
        names.add(item.root)
    return tuple(sorted(names))
