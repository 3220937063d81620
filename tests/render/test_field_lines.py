"""A message naming one field of an input object cites that field's line (rev-ml F3):
`file:line` of the key (or list item) the path ends on, found again from the
document's text only when a message asks; the document's own line when the text
does not spell the field out."""

from __future__ import annotations

import pytest

from modelplane_cli import yamlio
from modelplane_cli.render.loader import Sources, parse_stream
from modelplane_cli.render.references import unresolved

STREAM = """\
# a comment
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: inference}
value: 1000
---
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata:
  name: chat
  namespace: team
spec:
  replicas: 1
  priority: inferense
  caches:
    - cacheRef: {name: a}
    -
      cacheRef:
        name: b
---
apiVersion: v1
kind: List
items:
  - apiVersion: modelplane.ai/v1alpha1
    kind: InferenceCluster
    metadata: {name: one}
    spec:
      scheduling:
        allowedPriorities:
          - inference
          - batch
"""


@pytest.mark.parametrize(
    ("document", "path", "line"),
    [
        (1, ["spec", "priority"], 14),
        (1, ["spec", "caches", 0, "cacheRef"], 16),
        (1, ["spec", "caches", 1], 18),
        (1, ["spec", "caches", 1, "cacheRef", "name"], 19),
        (2, ["items", 0, "spec", "scheduling", "allowedPriorities", 1], 31),
        (0, ["value"], 5),
        (1, ["spec", "missing"], None),
        (1, ["spec", "caches", 2], None),
        (1, ["spec", "priority", "deeper"], None),
        (5, ["spec"], None),
    ],
)
def test_a_field_path_finds_the_line_of_its_last_step(
    document: int, path: list[str | int], line: int | None
) -> None:
    assert yamlio.field_line(STREAM, document, path) == line


def test_a_document_cites_its_fields_lines_and_its_own_for_a_field_it_lacks() -> None:
    cls, deployment, cluster = parse_stream(STREAM, "f.yaml")

    assert deployment.field_source("spec.priority") == "f.yaml:14"
    assert deployment.field_source("spec.caches[1].cacheRef") == "f.yaml:18"
    # A field the text does not hold (a default the render added) cites the document.
    assert deployment.field_source("spec.rollout.maxSurge") == "f.yaml:7"
    assert cluster.source == "f.yaml:24"
    assert cluster.field_source("spec.scheduling.allowedPriorities[1]") == "f.yaml:31"
    assert cls.field_source("value") == "f.yaml:5"


def test_an_unresolved_reference_cites_the_line_of_its_field() -> None:
    documents = parse_stream(STREAM, "f.yaml")
    sources = Sources({doc.key: doc for doc in documents})

    found = unresolved([doc.obj for doc in documents], sources)

    assert found == [
        'f.yaml:14: ModelDeployment team/chat: spec.priority: "inferense": no PriorityClass '
        "inferense in the input (the input has: inference)",
        "f.yaml:31: InferenceCluster one: spec.scheduling.allowedPriorities[1]: "
        '"batch": no PriorityClass batch in the input (the input has: inference)',
    ]
    # Given only where each object was read, a line cites the document, as before.
    plain = unresolved([doc.obj for doc in documents], dict(sources))
    assert [line.split(": ")[0] for line in plain] == ["f.yaml:7", "f.yaml:24"]


CLUSTERS = """\
apiVersion: v1
kind: Secret
metadata: {name: kube, namespace: ops}
stringData: {config: "..."}
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: named}
spec:
  cluster:
    existing:
      secretRef:
        name: kube
        namespace: ops
        key: kubeconfig
---
apiVersion: modelplane.ai/v1alpha1
kind: InferenceCluster
metadata: {name: defaulted}
spec:
  cluster:
    existing:
      secretRef:
        name: kube
        namespace: ops
"""


def test_a_missing_secret_key_cites_the_key_field_else_the_reference() -> None:
    documents = parse_stream(CLUSTERS, "c.yaml")
    sources = Sources({doc.key: doc for doc in documents})
    objects = [doc.obj for doc in documents]
    # The render defaults `key`; the source of `defaulted` does not spell it out.
    objects[2]["spec"]["cluster"]["existing"]["secretRef"]["key"] = "kubeconfig"

    found = unresolved(objects, sources)

    assert [line.split(": ")[0] for line in found] == ["c.yaml:15", "c.yaml:23"]
