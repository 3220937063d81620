"""Which upjet package serves an upjet API group, for the install tests.

provider-upjet-aws and provider-upjet-gcp publish one package per service: the
service's namespaced kinds (`<service>.<cloud>.m.upbound.io`) are in
`provider-<cloud>-<service>`, and the cloud's ProviderConfig kinds
(`<cloud>.m.upbound.io`) in `provider-family-<cloud>`, which every service package
depends on (package/crossplane.yaml.tmpl of both repositories at the pinned tags).
"""

import re
from typing import Final

# Where crossplane-contrib's release workflow publishes them
# (crossplane-contrib/provider-workflows publish-provider-family.yml).
REGISTRY: Final = "xpkg.crossplane.io/crossplane-contrib"
_GROUP = re.compile(r"(?:(?P<service>[a-z0-9]+)\.)?(?P<cloud>aws|gcp)\.m\.upbound\.io")
_PACKAGE = re.compile(r"provider-(?P<cloud>aws|gcp)-(?P<service>[a-z0-9]+)")


def package_of(group: str) -> str | None:
    """The upjet package (its name, without registry) that defines `group`; None
    for a group no upjet family defines."""
    match = _GROUP.fullmatch(group)
    if match is None:
        return None
    cloud, service = match["cloud"], match["service"]
    return f"provider-family-{cloud}" if service is None else f"provider-{cloud}-{service}"


def installed_with(package: str) -> frozenset[str]:
    """The upjet packages installing `package` installs: itself and, for a service
    package, its family's config package."""
    match = _PACKAGE.fullmatch(package)
    if match is None:
        return frozenset({package})
    return frozenset({package, f"provider-family-{match['cloud']}"})
