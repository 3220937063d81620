"""The YAML files the install tests read, each parsed once per worker with libyaml.

The pinned upstream CRDs are megabytes of YAML that several tests (and each
required kind's look-up) read; PyYAML's pure-Python parser spent most of those
tests' time parsing them again and again. The C loader builds the same Python
objects. Callers only read what they get: the cache hands every caller the same one.
"""

from functools import cache
from pathlib import Path
from typing import Any

import yaml

try:
    from yaml import CSafeLoader as _Loader  # pyright: ignore[reportAttributeAccessIssue]
except ImportError:  # PyYAML built without libyaml
    from yaml import SafeLoader as _Loader


@cache
def documents(path: Path) -> tuple[Any, ...]:
    """The non-empty documents of the YAML file at `path`."""
    return tuple(d for d in yaml.load_all(path.read_text(), Loader=_Loader) if d)


def document(path: Path) -> Any:
    """The one document of the YAML file at `path`."""
    (only,) = documents(path)
    return only
