"""YAML the way Kubernetes reads and writes it.

PyYAML's safe loader turns unquoted timestamps into datetime objects; Kubernetes
keeps them as strings (creationTimestamp, lastTransitionTime), and so must we, or
they could not travel through a protobuf Struct to a function. Resolving is done
in Python for either parser, so the C one (libyaml, several times faster on the
XRDs read at every start) drops timestamps the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import yaml

_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _KubeLoader(_SafeLoader):
    pass


_KubeLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_all(text: str) -> list[Any]:
    """Every document of a YAML stream, empty documents included as None."""
    return list(yaml.load_all(text, Loader=_KubeLoader))


def dump_all(objects: Iterable[Mapping[str, Any]]) -> str:
    """A multi-document YAML stream with sorted keys and no line folding."""
    return yaml.dump_all(
        [dict(obj) for obj in objects],
        Dumper=yaml.SafeDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 16,
        explicit_start=True,
    )


YAMLError = yaml.YAMLError
