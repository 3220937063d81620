"""Reading documents and APIs."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from modelplane_cli.render import ApiError, Apis, InputError, default_apis_dir, read_documents
from modelplane_cli.render.apis import CompositionSelectionError

from .support import write_apis

# A step's bootstrap requirement, completed by the field under test.
_REQUIRED = """
    requirements:
      requiredResources:
      - {requirementName: x, apiVersion: v1, kind: ConfigMap, %s}
"""
_CREDENTIAL = """
    credentials:
    - %s
"""

CM = """
apiVersion: v1
kind: ConfigMap
metadata: {name: %s, namespace: ns}
"""


def test_directories_are_read_recursively_in_path_order(tmp_path: Path) -> None:
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / "b" / "deep" / "one.yaml").write_text(CM % "one")
    (tmp_path / "a.yml").write_text(CM % "two" + "---\n" + CM % "three")
    (tmp_path / "c.json").write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "four"}}'
    )
    (tmp_path / "notes.txt").write_text("not yaml: [")

    docs = read_documents([str(tmp_path)])

    assert [d.obj["metadata"]["name"] for d in docs] == ["two", "three", "one", "four"]
    assert docs[1].source.endswith("a.yml:7")


def test_lists_are_expanded_and_render_events_dropped() -> None:
    text = """
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
- apiVersion: v1
  kind: Event
  metadata: {name: a.1}
  source: {component: modelplane-render}
- apiVersion: v1
  kind: Event
  metadata: {name: a.2}
  source: {component: kubelet}
"""
    docs = read_documents(["-"], stdin=io.StringIO(text))

    assert [d.obj["metadata"]["name"] for d in docs] == ["a", "a.2"]


def test_timestamps_stay_strings() -> None:
    text = CM % "a" + "data: {when: 2024-01-01T00:00:00Z, day: 2024-01-01}\n"

    (doc,) = read_documents(["-"], stdin=io.StringIO(text))

    assert doc.obj["data"] == {"when": "2024-01-01T00:00:00Z", "day": "2024-01-01"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- just\n- a list\n", "a document must be a mapping"),
        ("kind: ConfigMap\nmetadata: {name: a}\n", "apiVersion is required"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", "metadata.name is required"),
        ("apiVersion: v1\nkind: [\n", "<stdin>"),
        (CM % "a" + "data: {x: 1}\ndata: {y: 2}\n", '<stdin>:6: key "data" already set in map'),
        (CM % "a" + "data: {1: one}\n", "data: key 1 must be a string"),
        (CM % "a" + "data: {x: [.nan]}\n", "data.x[0]: nan is not a JSON number"),
        (CM % "a" + "binaryData: {x: !!binary aGk=}\n", "binaryData.x: a bytes value is not JSON"),
        # Shapes the engine reads on every object; each used to crash it.
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, ownerReferences: [x]}\n",
            "<stdin>:1: metadata.ownerReferences: must be a list of objects",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {tier: 1}}\n",
            "<stdin>:1: metadata.labels: must be a map of strings",
        ),
        (CM % "a" + "status: Ready\n", "<stdin>:2: status: must be an object"),
        (
            CM % "a" + "status: {conditions: [Ready]}\n",
            "<stdin>:2: status.conditions: must be a list of objects",
        ),
    ],
)
def test_bad_documents_are_rejected_with_their_source(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read_documents(["-"], stdin=io.StringIO(text))
    assert message in str(caught.value)


def test_a_missing_path_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        read_documents([str(tmp_path / "absent.yaml")])


def test_apis_are_indexed_by_kind(tmp_path: Path) -> None:
    apis = Apis.load(write_apis(tmp_path))

    assert apis.is_composite("example.org/v1", "XParent")
    assert not apis.is_composite("example.org/v2", "XParent")
    assert not apis.is_composite("v1", "ConfigMap")
    assert apis.is_namespaced_composite_kind("example.org/v1", "XPlatform") is False
    assert apis.is_namespaced_composite_kind("example.org/v1", "XChild") is True
    assert [
        s.function
        for s in apis.composition_for({"apiVersion": "example.org/v1", "kind": "XChild"}).steps
    ] == ["fn-child"]
    assert [p.name for p in apis.definition_files] == ["definition.yaml"] * 3


def test_composition_selection_by_reference_and_ambiguity(tmp_path: Path) -> None:
    apis_dir = write_apis(tmp_path)
    extra = (apis_dir / "xchildren" / "composition.yaml").read_text()
    extra = extra.replace("name: xchildren.example.org", "name: fast, labels: {speed: fast}")
    (apis_dir / "xchildren" / "fast.yaml").write_text(extra)
    apis = Apis.load(apis_dir)
    child = {"apiVersion": "example.org/v1", "kind": "XChild"}

    with pytest.raises(CompositionSelectionError, match="2 compositions match XChild"):
        apis.composition_for(child)
    by_ref = {**child, "spec": {"crossplane": {"compositionRef": {"name": "fast"}}}}
    assert apis.composition_for(by_ref).name == "fast"
    by_label = {
        **child,
        "spec": {"crossplane": {"compositionSelector": {"matchLabels": {"speed": "fast"}}}},
    }
    assert apis.composition_for(by_label).name == "fast"
    with pytest.raises(CompositionSelectionError, match="'slow' does not exist"):
        apis.composition_for(
            {**child, "spec": {"crossplane": {"compositionRef": {"name": "slow"}}}}
        )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("mode: Pipeline", "mode: Resources"), "only Pipeline is supported"),
        (
            lambda t: t.replace("functionRef: {name: fn-child}", "functionRef: {}"),
            "functionRef.name is required",
        ),
        # Each of these used to crash the loader instead of naming the field.
        (
            lambda t: t[: t.index("  pipeline:")] + "  pipeline: {a: b}\n",
            "spec.pipeline must be a list",
        ),
        (lambda t: t[: t.index("  pipeline:")] + "  pipeline: []\n", "spec.pipeline is required"),
        (lambda t: t + "\n    credentials: [token]\n", "credentials must be a list of objects"),
        # v2.3's Composition CRD: source is a required enum, and its CEL rule holds
        # only for a Secret with a secretRef (Crossplane's skip of other sources is
        # never reached).
        (lambda t: t + _CREDENTIAL % "{name: c}", "source is required"),
        (lambda t: t + _CREDENTIAL % "{name: c, source: Vault}", "must be None or Secret"),
        (lambda t: t + _CREDENTIAL % "{name: c, source: None}", "requires a secretRef"),
        (
            lambda t: (
                t + _CREDENTIAL % "{name: c, source: None, secretRef: {namespace: a, name: b}}"
            ),
            "requires a secretRef",
        ),
        (lambda t: t + _CREDENTIAL % "{name: c, source: Secret}", "requires a secretRef"),
        # The CRD's keyed lists: a repeated key is the API server's Duplicate value.
        (
            lambda t: t + "\n  - step: step-0\n    functionRef: {name: fn-child}\n",
            r'spec.pipeline\[1\]: Duplicate value: \{"step":"step-0"\}',
        ),
        (
            lambda t: (
                t + _CREDENTIAL % "{name: c, source: Secret, secretRef: {namespace: a, "
                "name: b}}\n    - {name: c, source: Secret, secretRef: {namespace: a, name: d}}"
            ),
            r'spec.pipeline\[0\].credentials\[1\]: Duplicate value: \{"name":"c"\}',
        ),
        (
            lambda t: (
                t + _REQUIRED % "name: a" + "      - {requirementName: x, apiVersion: v1, "
                "kind: Secret, name: b}\n"
            ),
            r"requirements.requiredResources\[1\]: Duplicate value",
        ),
        (lambda t: t + _REQUIRED % "matchLabels: [a]", "matchLabels must be an object"),
        (lambda t: t + _REQUIRED % "matchLabels: {a: 1}", "matchLabels must be a map of strings"),
        (lambda t: t + _REQUIRED % "name: a, namespace: 3", "namespace must be a string"),
        (lambda t: t + _REQUIRED % "name: [a]", "name must be a string"),
    ],
)
def test_unusable_compositions_are_rejected(
    tmp_path: Path, edit: Callable[[str], str], message: str
) -> None:
    apis_dir = write_apis(tmp_path)
    path = apis_dir / "xchildren" / "composition.yaml"
    path.write_text(edit(path.read_text()))

    with pytest.raises(ApiError, match=message):
        Apis.load(apis_dir)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t[: t.index("  versions:")] + "  versions: v1\n",
            "spec.versions must be a list",
        ),
        (lambda t: t.replace("scope: Namespaced", "scope: [Namespaced]"), "spec.scope must be a"),
        (lambda t: t.replace("kind: XChild", "kind: {name: XChild}"), "spec.names.kind must be a"),
    ],
)
def test_unusable_xrds_are_rejected(
    tmp_path: Path, edit: Callable[[str], str], message: str
) -> None:
    apis_dir = write_apis(tmp_path)
    path = apis_dir / "xchildren" / "definition.yaml"
    path.write_text(edit(path.read_text()))

    with pytest.raises(ApiError, match=message):
        Apis.load(apis_dir)


def test_a_composition_without_its_xrd_is_rejected(tmp_path: Path) -> None:
    apis_dir = write_apis(tmp_path)
    (apis_dir / "xchildren" / "definition.yaml").unlink()

    with pytest.raises(ApiError, match="composes XChild, which no XRD defines"):
        Apis.load(apis_dir)


def test_the_default_apis_directory_is_the_repositorys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "apis").mkdir()  # a fleet repository's own apis/ is not the CLI's
    found = default_apis_dir()
    assert found.name == "apis"
    assert (found.parent / "pyproject.toml").is_file()


def test_hidden_files_and_directories_are_skipped(tmp_path: Path) -> None:
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    (tmp_path / ".git" / "objects" / "x.yaml").write_text("not: [yaml")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yaml").write_text("on: push\n")
    (tmp_path / ".draft.yaml").write_text(CM % "draft")
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "cm.yaml").write_text(CM % "kept")

    docs = read_documents([str(tmp_path)])

    assert [d.obj["metadata"]["name"] for d in docs] == ["kept"]


def test_every_load_error_is_reported_at_once_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(CM % "a" + "---\n" + "kind: ConfigMap\nmetadata: {name: b}\n")
    (tmp_path / "b.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n")
    (tmp_path / "c.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {k: 1}\nstringData: {}\n"
    )

    with pytest.raises(InputError) as caught:
        read_documents([str(tmp_path), str(tmp_path / "absent")])

    # The parser's own words differ between libyaml and PyYAML; the place does not.
    problems = [p.split(": while parsing")[0] for p in caught.value.problems]
    assert problems == [
        f"{tmp_path / 'a.yaml'}:6: apiVersion is required",
        f"{tmp_path / 'b.yaml'}:4",
        f'{tmp_path / "c.yaml"}:5: key "stringData" already set in map',
        f"{tmp_path / 'absent'}: no such file or directory",
    ]


def test_list_items_are_named_by_their_own_line() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap}\n"
    with pytest.raises(InputError, match=r"^<stdin>:4: metadata.name is required$"):
        read_documents(["-"], stdin=io.StringIO(text))


@pytest.mark.parametrize(
    ("text", "observed"),
    [
        (CM % "plain", False),
        (CM % "a" + "---\n" + CM % "b" + "status: {phase: Ready}\n", True),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, uid: 0b6cbd34}\n", True),
        # Only the API server writes a generation or managedFields; finalizers a person
        # may write by hand.
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, generation: 2}\n", True),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, managedFields: [{}]}\n", True),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, finalizers: [x/y]}\n", False),
    ],
)
def test_a_file_that_carries_observed_state_is_the_running_world(text: str, observed: bool) -> None:
    docs = read_documents(["-"], stdin=io.StringIO(text))

    assert {d.observed for d in docs} == {observed}
