"""The world a render starts from: known kinds, the observed world and sources over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelplane_cli import yamlio
from modelplane_cli.render import Apis, Document, SchemaAdmission, output, parse_stream

from .support import PARENT, condition, docs, find, one, render_documents, render_text


@pytest.fixture
def admission(apis_dir: Path) -> SchemaAdmission:
    return SchemaAdmission.from_files(Apis.load(apis_dir).definition_files)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            "apiVersion: example.org/v2\nkind: XParent",
            '<test>:1: example.org/v2 XParent "web": XParent.example.org is not served at '
            "version 'v2' (served: v1)",
        ),
        (
            "apiVersion: example.org/v1\nkind: XParnet",
            "<test>:1: example.org/v1 XParnet \"web\": no kind 'XParnet' in example.org "
            "(its kinds: XChild, XParent, XPlatform)",
        ),
    ],
)
def test_a_document_of_an_unknown_version_or_kind_of_the_apis_is_an_error(
    apis_dir: Path, header: str, message: str
) -> None:
    text = PARENT.strip().replace("apiVersion: example.org/v1\nkind: XParent", header)

    result = render_text(apis_dir, text)

    assert result.input_errors == [message]
    assert not result.ok
    assert find(result, "XParent") == []


def _running(apis_dir: Path) -> list[Document]:
    """The rendered world of PARENT, read back as the observed world."""
    text = output.to_yaml(render_text(apis_dir, PARENT))
    return parse_stream(text, "world.yaml", observed=True)


def test_a_source_replaces_the_observed_object_keeping_what_the_server_wrote(
    apis_dir: Path,
) -> None:
    world = _running(apis_dir)
    source = docs(PARENT.replace("children: 2", "children: 3"))

    result = render_documents(apis_dir, [*world, *source])

    assert result.ok, result.errors
    parent = one(result, "XParent", "web")
    assert parent["spec"]["children"] == 3
    (before,) = [d.obj for d in world if d.obj["kind"] == "XParent"]
    assert parent["metadata"]["uid"] == before["metadata"]["uid"]
    assert len(find(result, "XChild")) == 3
    # The baseline is the observed world as given, for -o diff.
    assert [o["spec"]["children"] for o in result.baseline if o["kind"] == "XParent"] == [2]


def test_identical_duplicates_are_one_object_and_different_ones_an_error(apis_dir: Path) -> None:
    same = render_documents(apis_dir, [*docs(PARENT), *docs(PARENT)])
    assert same.ok, same.errors

    other = docs(PARENT.replace("children: 2", "children: 1"))
    clash = render_documents(apis_dir, [*docs(PARENT), *other])
    assert clash.input_errors == ["<test>:2: XParent team-a/web is also defined at <test>:2"]


def test_a_rejected_source_keeps_the_observed_object(
    apis_dir: Path, admission: SchemaAdmission
) -> None:
    world = _running(apis_dir)
    bad = docs(PARENT.replace("children: 2", "children: 11"))

    result = render_documents(apis_dir, [*world, *bad], admission=admission)

    assert [e.split(": ", 1)[1] for e in result.input_errors] == [
        'XParent.example.org "web" is invalid: spec.children: Invalid value: 11: '
        "spec.children in body should be less than or equal to 10"
    ]
    parent = one(result, "XParent", "web")
    assert parent["spec"]["children"] == 2
    assert condition(parent, "Ready")["status"] == "True"
    assert len(find(result, "XChild")) == 2


def test_a_file_with_observed_state_overlays_like_observed(apis_dir: Path) -> None:
    """`render sources/ world.yaml` without --observed: the file carrying status is the world."""
    text = output.to_yaml(render_text(apis_dir, PARENT))
    inferred = parse_stream(text, "world.yaml")
    assert all(d.observed for d in inferred)
    source = docs(PARENT.replace("children: 2", "children: 1"))

    result = render_documents(apis_dir, [*source, *inferred])

    assert result.ok, result.errors
    assert len(find(result, "XChild")) == 1
    assert yamlio.load_all(yamlio.dump_all(result.baseline)) == [
        d.obj for d in sorted(inferred, key=lambda d: d.key)
    ]
