"""The in-process commands' shared CRD reading (`cli.shared_definitions`) answers what
a command of its own reads: the same file's schemas, read again when its bytes change,
and an unreadable file's error every time."""

from pathlib import Path

import pytest

from modelplane_cli.render.apiservers import WorkloadApiServers
from modelplane_cli.render.world import World
from modelplane_cli.schema.definitions import DefinitionError

from .cli import _DEFINITIONS, shared_definitions, shared_setup


def _crd(kind: str) -> str:
    plural = kind.lower() + "s"
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {plural}.example.dev
spec:
  group: example.dev
  names: {{kind: {kind}, plural: {plural}}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {{type: object, properties: {{size: {{type: integer}}}}}}
"""


def test_the_same_bytes_are_read_once_and_changed_bytes_again(tmp_path: Path) -> None:
    file = tmp_path / "example.dev_widgets.yaml"
    file.write_text(_crd("Widget"))
    first = shared_definitions(file)
    assert shared_definitions(file) is first
    assert first.kinds() == [("example.dev/v1", "Widget")]

    file.write_text(_crd("Gadget"))
    assert shared_definitions(file).kinds() == [("example.dev/v1", "Gadget")]


def test_a_file_that_does_not_load_fails_every_time(tmp_path: Path) -> None:
    file = tmp_path / "example.dev_broken.yaml"
    file.write_text("kind: [unclosed\n")
    for _ in range(2):
        with pytest.raises(DefinitionError):
            shared_definitions(file)


def test_a_command_checks_against_what_it_would_read_alone(tmp_path: Path) -> None:
    file = tmp_path / "example.dev_widgets.yaml"
    file.write_text(_crd("Widget"))
    manifest = {
        "apiVersion": "example.dev/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"size": "large"},
    }
    obj = {"kind": "Object", "spec": {"forProvider": {"manifest": manifest}}}

    alone = WorkloadApiServers([file]).apply(World([]), obj)
    assert alone.rejected is not None and "spec.size" in alone.rejected
    for _ in range(2):
        with shared_setup():
            shared = WorkloadApiServers([file]).apply(World([]), obj)
        assert shared == alone
    # The commands read the file through the shared reading: the same registry.
    assert _DEFINITIONS[(str(file), file.read_bytes())] is shared_definitions(file)
