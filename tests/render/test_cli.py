"""`modelplane render` on the command line: formats, exit status, usage errors."""

from __future__ import annotations

import argparse
import gc
import io
import json
from collections.abc import Mapping
from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
import yaml
from crossplane.function import resource, response

from modelplane_cli import render_command
from modelplane_cli.render import FunctionRegistry, parse_stream
from modelplane_cli.render.runners import Runner

from .support import (
    PARENT,
    ChildRunner,
    ParentRunner,
    assert_same_world,
    default_runners,
    write_apis,
)

SETTINGS = """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a}
data: {replicas: "1"}
"""


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="modelplane")
    render_command.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["render", *argv])


def cli(argv: list[str], runners: Mapping[str, Runner] | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    registry = FunctionRegistry(default_runners() if runners is None else runners)
    code = render_command.run(parse(argv), registry=registry, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[Path, Path]:
    apis = write_apis(tmp_path)
    inputs = tmp_path / "fleet"
    inputs.mkdir()
    (inputs / "web.yaml").write_text(PARENT)
    return apis, inputs


def test_yaml_output_reads_back_to_the_same_world(fleet: tuple[Path, Path], tmp_path: Path) -> None:
    apis, inputs = fleet

    code, out, err = cli([str(inputs), "--apis", str(apis), "-o", "yaml"])

    assert code == 0, err
    kinds = [d.obj["kind"] for d in parse_stream(out, "out")]
    assert kinds.count("XChild") == 2
    assert "kind: Event" in out  # written, though reading drops them again
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(out)
    again_code, again, _ = cli([str(rendered), "--apis", str(apis), "-o", "yaml"])
    assert again_code == 0
    assert_same_world(again, out)


def test_json_output_is_a_v1_list(fleet: tuple[Path, Path]) -> None:
    apis, inputs = fleet

    code, out, _ = cli([str(inputs), "--apis", str(apis), "-o", "json"])

    assert code == 0
    listing = json.loads(out)
    assert listing["apiVersion"] == "v1"
    assert listing["kind"] == "List"
    keys = [
        (i["apiVersion"], i["kind"], i["metadata"].get("namespace", ""), i["metadata"]["name"])
        for i in listing["items"]
    ]
    assert keys == sorted(keys)


def test_summary_is_the_default(fleet: tuple[Path, Path]) -> None:
    apis, inputs = fleet

    code, out, _ = cli([str(inputs), "--apis", str(apis)])

    assert code == 0
    assert out.startswith("Rendered ")
    assert "COMPOSITES" in out
    assert "WORKLOADS" in out


def test_a_failed_reconcile_exits_one_and_says_why(fleet: tuple[Path, Path]) -> None:
    apis, inputs = fleet

    code, out, err = cli([str(inputs), "--apis", str(apis), "-o", "yaml"], runners={})

    assert code == 1
    assert "kind: XParent" in out
    assert "error: XParent team-a/web: cannot compose resources" in err


def test_not_converging_exits_one(fleet: tuple[Path, Path]) -> None:
    apis, inputs = fleet

    code, _, err = cli([str(inputs), "--apis", str(apis), "--rounds", "1"])

    assert code == 1
    assert "did not converge within 1 round" in err


@pytest.mark.parametrize(
    "argv",
    [["--rounds", "0"], ["--rounds", "many"], ["-o", "xml"], ["--now", "yesterday"]],
)
def test_usage_errors_exit_two(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        parse(argv)
    assert caught.value.code == 2


@pytest.mark.parametrize("which", ["path", "apis"])
def test_unreadable_inputs_exit_one(fleet: tuple[Path, Path], tmp_path: Path, which: str) -> None:
    apis, inputs = fleet
    missing = str(tmp_path / "absent")
    argv = [missing, "--apis", str(apis)] if which == "path" else [str(inputs), "--apis", missing]

    code, out, err = cli(argv)

    assert code == 1
    assert out == ""
    assert "absent" in err


class _Flagging(ParentRunner):
    """A parent that reports a condition False for a problem, and a Warning."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        response.set_conditions(
            rsp, resource.Condition(typ="Valid", status="False", reason="InvalidSpec")
        )


class _Warning(ParentRunner):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        response.warning(rsp, "spec.image: the tag is mutable")


@pytest.mark.parametrize(
    ("runner", "level", "code"),
    [
        (ParentRunner(), "error", 0),
        (ParentRunner(), "warning", 0),
        (_Flagging(), "never", 0),
        (_Flagging(), "error", 1),
        (_Warning(), "error", 0),
        (_Warning(), "warning", 1),
    ],
    ids=[
        "clean-error",
        "clean-warning",
        "condition-never",
        "condition-error",
        "warning-error",
        "warning-warning",
    ],
)
def test_fail_on_levels(
    fleet: tuple[Path, Path], runner: ParentRunner, level: str, code: int
) -> None:
    apis, inputs = fleet
    (inputs / "settings.yaml").write_text(SETTINGS)
    runners = {**default_runners(), "fn-parent": runner}

    status, _, err = cli([str(inputs), "--apis", str(apis), "--fail-on", level], runners)

    assert status == code, err
    if isinstance(runner, _Flagging) and code:
        assert "error: XParent team-a/web: Valid=False (InvalidSpec)" in err
    if isinstance(runner, _Warning) and code:
        assert (
            'error: XParent team-a/web: Warning ComposeResources: Pipeline step "step-0": '
            "spec.image: the tag is mutable"
        ) in err


class _NeverRestart(ChildRunner):
    """A child whose Deployment template restarts Never, which apps/v1 refuses."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        workload = resource.struct_to_dict(rsp.desired.resources["workload"].resource)
        workload["spec"]["forProvider"]["manifest"]["spec"]["template"]["spec"]["restartPolicy"] = (
            "Never"
        )
        resource.update(rsp.desired.resources["workload"], workload)


@pytest.mark.parametrize(("level", "code"), [("error", 1), ("never", 0)])
def test_a_manifest_the_api_server_refuses_fails_unless_never(
    fleet: tuple[Path, Path], level: str, code: int
) -> None:
    apis, inputs = fleet
    (inputs / "settings.yaml").write_text(SETTINGS)
    runners = {**default_runners(), "fn-child": _NeverRestart()}

    status, _, err = cli([str(inputs), "--apis", str(apis), "--fail-on", level], runners)

    assert status == code, err
    refused = (
        'create failed: cannot create object: Deployment.apps "web-0" is invalid: '
        'spec.template.spec.restartPolicy: UnsupportedValueError value: "Never": supported values: '
        '"Always" (the API server would refuse it)'
    )
    assert (refused in err) == bool(code)


def test_rejected_input_fails_even_with_fail_on_never(fleet: tuple[Path, Path]) -> None:
    apis, inputs = fleet
    (inputs / "web.yaml").write_text(PARENT.replace("example.org/v1", "example.org/v9"))

    status, _, err = cli([str(inputs), "--apis", str(apis), "--fail-on", "never"])

    assert status == 1
    assert "XParent.example.org is not served at version 'v9'" in err


def test_diff_against_the_observed_world(fleet: tuple[Path, Path], tmp_path: Path) -> None:
    apis, inputs = fleet
    _, world, _ = cli([str(inputs), "--apis", str(apis), "-o", "yaml"])
    (tmp_path / "world.yaml").write_text(world)
    (inputs / "web.yaml").write_text(PARENT.replace("{children: 2}", "{children: 3}"))

    status, out, err = cli(
        ["--observed", str(tmp_path / "world.yaml"), str(inputs), "--apis", str(apis), "-o", "diff"]
    )

    assert status == 0, err
    headers = [line for line in out.splitlines() if line.split(" ")[0] in ("added", "changed")]
    assert headers[:2] == ["added    XChild team-a/web-2", "changed  XParent team-a/web"]
    assert headers[2].startswith("added    Object team-a/web-")
    assert "-  children: 2\n+  children: 3" in out
    assert out.endswith(
        "2 added, 1 changed, 0 removed; replicas: 0 placed, 0 moved, 0 replaced, 0 removed\n"
    )

    # The same world given as a plain PATH is recognised as the running world.
    again, plain, _ = cli(
        [str(inputs), str(tmp_path / "world.yaml"), "--apis", str(apis), "-o", "diff"]
    )
    assert (again, plain) == (0, out)


def test_diff_of_a_converged_world_is_empty(fleet: tuple[Path, Path], tmp_path: Path) -> None:
    apis, inputs = fleet
    _, world, _ = cli([str(inputs), "--apis", str(apis), "-o", "yaml"])
    (tmp_path / "world.yaml").write_text(world)

    status, out, _ = cli(
        ["--observed", str(tmp_path / "world.yaml"), "--apis", str(apis), "-o", "diff"]
    )

    assert (status, out) == (0, "No changes.\n")


REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("region: us-east-1", "region: us-west-2", "spec.cluster.eks.region: Invalid value"),
        ("zones: [us-east-1a, us-east-1b]", "", "spec.cluster.eks.zones: Invalid value"),
    ],
    ids=["a changed region", "removed zones"],
)
def test_an_input_replacing_an_observed_composite_is_admitted_as_an_update(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    """The API server runs transition rules (`oldSelf`) on an update, and keeps the
    object it has when one refuses it: so does a render against the observed world."""

    def run(argv: list[str]) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = render_command.run(parse(argv), stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    example = REPO / "examples" / "clusters" / "eks"
    code, world, err = run([str(example), "-o", "yaml"])
    assert code == 0, err
    (tmp_path / "world.yaml").write_text(world)
    edited = tmp_path / "edited"
    edited.mkdir()
    text = (example / "cluster.yaml").read_text()
    assert old in text
    (edited / "cluster.yaml").write_text(text.replace(old, new))

    status, out, err = run(["--observed", str(tmp_path / "world.yaml"), str(edited), "-o", "diff"])

    assert status == 1
    assert message in err
    assert out == "No changes.\n"


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cyclic_collector_is_off_while_a_render_works_and_as_before_after(
    fleet: tuple[Path, Path], enabled: bool
) -> None:
    """A collection during a render finds next to nothing and walks every object the
    render keeps (`render_command._collector_relaxed`); it runs again afterwards."""
    apis, inputs = fleet
    during: list[bool] = []

    class Probing(ParentRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            during.append(gc.isenabled())
            super().compose(request, rsp)

    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        code, _, err = cli(
            [str(inputs), "--apis", str(apis), "--in-process"],
            {**default_runners(), "fn-parent": Probing()},
        )
        after = gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()

    assert code == 0, err
    assert during and not any(during)
    assert after is enabled


def test_diff_keeps_what_other_field_managers_own(fleet: tuple[Path, Path], tmp_path: Path) -> None:
    apis, inputs = fleet
    _, world, _ = cli([str(inputs), "--apis", str(apis), "-o", "yaml"])
    documents = [d for d in yaml.safe_load_all(world) if d]
    objects = [d for d in documents if d["kind"] == "Object"]
    assert objects
    for obj in objects:
        meta = obj["metadata"]
        # What crossplane-runtime's managed reconciler writes, recorded with no
        # managedFields, and a label another manager's managedFields say it owns.
        meta["annotations"] = {
            **meta["annotations"],
            "crossplane.io/external-name": meta["name"],
            "crossplane.io/external-create-succeeded": "2026-01-01T00:00:00Z",
        }
        meta["labels"] = {**meta["labels"], "team": "a"}
        meta["managedFields"] = [
            {
                "manager": "kubectl-label",
                "operation": "Update",
                "apiVersion": obj["apiVersion"],
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}},
            }
        ]
    (tmp_path / "world.yaml").write_text(yaml.safe_dump_all(documents))

    status, out, _ = cli(
        ["--observed", str(tmp_path / "world.yaml"), "--apis", str(apis), "-o", "diff"]
    )

    assert (status, out) == (0, "No changes.\n")
