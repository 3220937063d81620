"""What the simulated providers report: the live state, changes in flight, refusals.

The test API's XChild composes an Object wrapping a Deployment; its status
`phase` says whether it saw the Deployment Available.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
from crossplane.function import response

from modelplane_cli import yamlio
from modelplane_cli.render import output, parse_stream
from modelplane_cli.render.simulate import healthy

from .support import (
    PARENT,
    ParentRunner,
    condition,
    default_runners,
    find,
    one,
    render_documents,
    render_text,
)

Obj = dict[str, Any]


def _world(apis_dir: Path) -> list[Obj]:
    return [d.obj for d in parse_stream(output.to_yaml(render_text(apis_dir, PARENT)), "w")]


def _render(apis_dir: Path, objects: list[Obj], **kwargs: Any) -> Any:
    text = yamlio.dump_all(objects)
    return render_documents(apis_dir, parse_stream(text, "world.yaml"), **kwargs)


def _objects(objects: list[Obj]) -> list[Obj]:
    return sorted(
        (o for o in objects if o["kind"] == "Object"), key=lambda o: o["metadata"]["name"]
    )


def _deployment(obj: Obj) -> Obj:
    return obj["spec"]["forProvider"]["manifest"]


def test_an_unchanged_manifest_keeps_its_observed_status_even_when_the_object_changes(
    apis_dir: Path,
) -> None:
    world = _world(apis_dir)
    first = _objects(world)[0]
    first["metadata"]["labels"]["team"] = "edited"  # the composite will put its labels back
    first["status"]["atProvider"]["manifest"]["status"] = {
        "conditions": [{"type": "Available", "status": "False", "reason": "Crashing"}]
    }

    result = _render(apis_dir, world)

    assert result.ok, result.errors
    kept = _objects(result.objects)[0]
    assert "team" not in kept["metadata"]["labels"]
    assert kept["status"]["atProvider"]["manifest"]["status"]["conditions"][0]["reason"] == (
        "Crashing"
    )
    assert one(result, "XChild", "web-0")["status"]["phase"] == "Pending"
    assert one(result, "XChild", "web-1")["status"]["phase"] == "Serving"


def test_a_changed_workload_is_not_serving_for_one_round(apis_dir: Path) -> None:
    world = _world(apis_dir)
    parent = next(o for o in world if o["kind"] == "XParent")
    parent["spec"]["image"] = "engine:v2"

    phases: list[str] = []
    for rounds in (1, 2, 3, 4, 5):
        result = _render(apis_dir, world, max_rounds=rounds)
        phases.append(one(result, "XChild", "web-0")["status"]["phase"])

    # XChild reconciles before XParent: round 1 changes the child's spec, round 2
    # the Object's manifest; in round 3 it is rolling out, in round 4 healthy.
    assert phases == ["Serving", "Serving", "Pending", "Serving", "Serving"]
    assert result.converged
    assert (
        _deployment(_objects(result.objects)[0])["spec"]["template"]["spec"]["containers"][0][
            "image"
        ]
        == "engine:v2"
    )


def test_a_manifest_the_api_server_refuses_is_synced_false_and_never_ready(apis_dir: Path) -> None:
    text = PARENT.replace("spec: {children: 2}", "spec: {children: 1, image: ''}")

    result = render_text(apis_dir, text)

    (obj,) = find(result, "Object")
    assert condition(obj, "Synced") == {
        "type": "Synced",
        "status": "False",
        "reason": "ReconcileError",
        "message": 'create failed: cannot create object: Deployment.apps "web-0" is invalid: '
        "spec.template.spec.containers[0].image: Required value",
    }
    assert condition(obj, "Ready") == {"type": "Ready", "status": "False", "reason": "Creating"}
    assert "atProvider" not in obj["status"]
    assert result.rejected_manifests == [
        f"Object team-a/{obj['metadata']['name']}: {condition(obj, 'Synced')['message']}"
    ]
    assert one(result, "XChild")["status"]["phase"] == "Pending"
    assert result.converged


def test_events_are_kept_from_every_round(apis_dir: Path) -> None:
    class Announcing(ParentRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            for name in sorted(rsp.desired.resources):
                if name not in request.observed.resources:
                    response.normal(rsp, f"creating {name}")

    result = render_text(apis_dir, PARENT, {**default_runners(), "fn-parent": Announcing()})

    assert result.rounds > 1
    created = sorted(e["message"] for e in result.events if "creating" in e["message"])
    assert created == [
        'Pipeline step "step-0": creating child-0',
        'Pipeline step "step-0": creating child-1',
    ]
    assert {e["count"] for e in result.events} == {1}


def test_concurrent_composites_read_the_round_s_snapshot(apis_dir: Path) -> None:
    """Sequentially the parent's new child reconciles in the round it appears;
    concurrently it is first seen the round after, so the world takes longer."""
    sequential = render_text(apis_dir, PARENT)
    concurrent = render_documents(apis_dir, parse_stream(PARENT, "<test>"), concurrent=True)

    assert sequential.ok and concurrent.ok, concurrent.errors
    assert concurrent.objects == sequential.objects
    assert concurrent.rounds > sequential.rounds


def test_a_secrets_data_is_reported_redacted_as_the_installed_provider_reports_it() -> None:
    # provider-kubernetes runs with --sanitize-secrets (install/providers): a Secret
    # Object's read-back never carries the data, whatever the manifest held.
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "token", "namespace": "team-a"},
        "data": {"HF_TOKEN": "c2VjcmV0"},
    }
    reported = healthy(secret)
    assert reported["data"] == {"redacted": None}
    assert secret["data"] == {"HF_TOKEN": "c2VjcmV0"}  # the manifest itself is not changed
    without_data = {k: v for k, v in secret.items() if k != "data"}
    assert healthy(without_data)["data"] == {"redacted": None}
    config_map = {**secret, "kind": "ConfigMap"}
    assert healthy(config_map)["data"] == config_map["data"]
