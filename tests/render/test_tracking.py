"""The sync that applied an object, read from Argo CD's and Flux's marks on it."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane_cli.render.tracking import Owner, applied_by, keep_marks, owner, prune_disabled


def obj(labels: dict[str, Any] | None = None, annotations: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "x"}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment", "metadata": meta}


ARGO_ID = "argocd.argoproj.io/tracking-id"
INSTANCE = "app.kubernetes.io/instance"
FLUX = "kustomize.toolkit.fluxcd.io/name"
FLUX_NS = "kustomize.toolkit.fluxcd.io/namespace"


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        (obj(), None),
        (obj(annotations={ARGO_ID: "team-a:modelplane.ai/ModelDeployment:ns/x"}), "team-a"),
        # Apps in any namespace: the Application is named <namespace>_<name>.
        (
            obj(annotations={ARGO_ID: "argocd_team-a:modelplane.ai/ModelDeployment:ns/x"}),
            "argocd_team-a",
        ),
        (obj(labels={INSTANCE: "team-a"}), "team-a"),
        # annotation+label: the label is informational, the annotation tracks.
        (obj({INSTANCE: "chart"}, {ARGO_ID: "team-a:g/K:ns/x"}), "team-a"),
        (obj(annotations={ARGO_ID: "no-identity"}), None),
        (obj(annotations={ARGO_ID: ":g/K:ns/x"}), None),
        (obj(annotations=["not", "a", "map"]), None),
        (obj(labels={INSTANCE: 5}), None),
    ],
)
def test_argo_cd_tracking(found: dict[str, Any], expected: str | None) -> None:
    assert owner(found) == (None if expected is None else Owner("Argo CD Application", expected))


def test_flux_tracking_names_the_kustomization_by_namespace() -> None:
    assert owner(obj({FLUX: "apps", FLUX_NS: "flux-system"})) == Owner(
        "Flux Kustomization", "flux-system/apps"
    )
    assert str(owner(obj({FLUX: "apps"}))) == "Flux Kustomization apps"
    # Flux's labels win over the instance label a chart may have written.
    assert owner(obj({FLUX: "apps", INSTANCE: "chart"})) == Owner("Flux Kustomization", "apps")


@pytest.mark.parametrize(
    ("annotations", "kept"),
    [
        ({}, False),
        ({"argocd.argoproj.io/sync-options": "Prune=false"}, True),
        ({"argocd.argoproj.io/sync-options": "ServerSideApply=true, Prune=false"}, True),
        ({"argocd.argoproj.io/sync-options": "Prune=true"}, False),
        ({"argocd.argoproj.io/sync-options": "Prune=confirm"}, False),
        ({"kustomize.toolkit.fluxcd.io/prune": "disabled"}, True),
        ({"kustomize.toolkit.fluxcd.io/prune": "enabled"}, False),
    ],
)
def test_what_the_tool_is_told_to_keep(annotations: dict[str, str], kept: bool) -> None:
    assert prune_disabled(obj(annotations=annotations)) is kept


def test_the_tools_marks_stay_on_an_applied_source_that_leaves_them_out() -> None:
    world = obj(
        {FLUX: "apps", "team": "a", INSTANCE: "team-a"},
        {ARGO_ID: "team-a:g/K:ns/x", "note": "world's"},
    )
    applied = obj({"team": "b"})
    set_by_source = obj({FLUX: "mine"}, {ARGO_ID: "mine:g/K:ns/x"})

    keep_marks(world, applied)
    keep_marks(world, set_by_source)

    assert applied["metadata"]["labels"] == {"team": "b", FLUX: "apps", INSTANCE: "team-a"}
    assert applied["metadata"]["annotations"] == {ARGO_ID: "team-a:g/K:ns/x"}
    assert set_by_source["metadata"]["labels"] == {FLUX: "mine", INSTANCE: "team-a"}
    assert set_by_source["metadata"]["annotations"] == {ARGO_ID: "mine:g/K:ns/x"}


def test_a_mark_the_source_carries_itself_is_not_a_syncs() -> None:
    tracked = obj(annotations={ARGO_ID: "team-a:g/K:ns/x"})
    assert applied_by(tracked, obj()) == Owner("Argo CD Application", "team-a")
    labelled = obj({INSTANCE: "llama"})
    assert applied_by(labelled, obj({INSTANCE: "llama"})) is None
    # Argo CD's label tracking overwrites the label with its Application's name.
    assert applied_by(obj({INSTANCE: "team-a"}), labelled) == Owner("Argo CD Application", "team-a")
    assert owner(labelled, instance_label=False) is None


def test_a_tools_annotation_counts_though_the_source_labels_the_same_application() -> None:
    """Argo CD's annotation tracking on the world's copy, and the repository's own
    `app.kubernetes.io/instance` naming the same Application: the annotation is the
    tool's mark, whatever the label says (final-t-d F1)."""
    source = obj({INSTANCE: "team-a"})
    world = obj({INSTANCE: "team-a"}, {ARGO_ID: "team-a:g/K:ns/x"})
    assert applied_by(world, source) == Owner("Argo CD Application", "team-a")
