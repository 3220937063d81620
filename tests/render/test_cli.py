"""`modelplane render` on the command line: formats, exit status, usage errors."""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from modelplane_cli import render_command
from modelplane_cli.render import FunctionRegistry, parse_stream
from modelplane_cli.render.runners import Runner

from .support import PARENT, default_runners, write_apis


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
    assert again == out


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
    [["--rounds", "0"], ["--rounds", "many"], ["-o", "xml"]],
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
