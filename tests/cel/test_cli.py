"""`modelplane cel eval`, in process and once as a subprocess."""

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from modelplane_cli import cel_command

DEVICE_YAML = """\
name: gpu
driver: gpu.nvidia.com
count: 8
attributes:
  architecture: {string: Hopper}
  cudaComputeCapability: {version: "9.0.0"}
capacity:
  memory: {value: "81559Mi"}
"""


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="modelplane")
    cel_command.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cel_command.run_eval(parse(argv), io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def device_file(tmp_path: Path) -> Path:
    path = tmp_path / "device.yaml"
    path.write_text(DEVICE_YAML)
    return path


_SYNTAX = "Syntax error: unexpected end of input"


@pytest.mark.parametrize(
    ("expression", "code", "output"),
    [
        ("1 + 1", 0, {"result": 2}),
        ("'a' + 'b'", 0, {"result": "ab"}),
        ("2.5", 0, {"result": 2.5}),
        ("[1, true]", 1, {"error": "compile", "message": "expected type 'int' but found 'bool'"}),
        ('quantity("1.5Gi")', 0, {"result": "1536Mi", "type": "quantity"}),
        ('semver("v1.2", true)', 0, {"result": "1.2.0", "type": "semver"}),
        ("[quantity('1k')]", 0, {"result": ["1k"]}),
        ("1.0 / 0.0", 0, {"result": "+Inf", "type": "double"}),
        ("b'hi'", 0, {"result": "aGk=", "type": "bytes"}),
        ("null", 0, {"result": None}),
        ("[int, type(1)]", 0, {"result": ["int", "int"]}),
        ("1 / 0", 1, {"error": "runtime", "message": "division by zero"}),
        ("1 +", 1, {"error": "compile", "message": f"ERROR: <input>:1:3: {_SYNTAX}"}),
    ],
)  # fmt: skip
def test_eval_prints_one_json_object(expression: str, code: int, output: dict[str, Any]) -> None:
    status, out, _ = run(["cel", "eval", expression])
    assert status == code
    assert json.loads(out) == output


@pytest.mark.parametrize(
    ("expression", "code", "output"),
    [
        ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0', 0, False),
        ('device.attributes["gpu.nvidia.com"].architecture == "Hopper"', 0, True),
        ('device.attributes["gpu.nvidia.com"].cudaComputeCapability.major() >= 9', 0, True),
    ],
)
def test_eval_with_device(device_file: Path, expression: str, code: int, output: bool) -> None:
    status, out, _ = run(["cel", "eval", "--device", str(device_file), expression])
    assert (status, json.loads(out)) == (code, {"result": output})


def test_selector_must_yield_bool(device_file: Path) -> None:
    status, out, _ = run(["cel", "eval", "--device", str(device_file), "device.driver"])
    assert status == 1
    assert json.loads(out)["error"] == "compile"
    status, out, _ = run(
        [
            "cel",
            "eval",
            "--device",
            str(device_file),
            'device.attributes["gpu.nvidia.com"].architecture',
        ]
    )
    assert status == 1
    assert json.loads(out) == {
        "error": "runtime",
        "message": "CEL result of type string could not be converted to bool",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["cel", "eval"],
        ["cel", "eval", "--jsonl", "1"],
        ["cel", "eval", "--device", "/nonexistent/device.yaml", "true"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    status, out, err = run(argv)
    assert status == 2
    assert out == ""
    assert "error" in err


def test_invalid_device_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    path.write_text(json.dumps({"driver": "d", "capacity": {"memory": "8O Gi"}}))
    status, _, err = run(["cel", "eval", "--device", str(path), "true"])
    assert status == 2
    assert 'capacity["memory"]: invalid quantity "8O Gi"' in err


def test_jsonl_answers_every_line_in_order(device_file: Path) -> None:
    lines = [
        json.dumps({"expr": "1 + 1"}),
        "not json",
        json.dumps({"expr": 'device.driver == "x"', "device": {"driver": "x"}}),
        json.dumps({"expr": 'device.driver == "gpu.nvidia.com"', "device": {"driver": "y"}}),
        json.dumps({"expr": 'semver("1.0")'}),
        json.dumps({"expr": "x"}),
        json.dumps(["expr"]),
        json.dumps({"expr": 5}),
        json.dumps({"expr": "true", "device": {"capacity": {"m": "8O Gi"}}}),
        "",
    ]
    status, out, _ = run(["cel", "eval", "--jsonl"], "\n".join(lines) + "\n")
    assert status == 0
    results = [json.loads(line) for line in out.splitlines()]
    assert [r.get("result", r.get("error")) for r in results] == [
        2, "input", True, False, "runtime", "compile", "input", "input", "input", "input",
    ]  # fmt: skip
    assert results[4]["message"] == "No Major.Minor.Patch elements found"
    assert 'capacity["m"]' in results[8]["message"]


def test_jsonl_goes_on_after_a_line_nested_too_deeply() -> None:
    lines = ["[" * 100_000 + "]" * 100_000, json.dumps({"expr": "1 + 1"})]
    status, out, _ = run(["cel", "eval", "--jsonl"], "\n".join(lines) + "\n")
    assert status == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"error": "input", "message": "the line is nested too deeply to decode"},
        {"result": 2},
    ]


def test_a_device_file_nested_too_deeply_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "device.yaml"
    path.write_text("[" * 100_000 + "]" * 100_000)
    status, out, err = run(["cel", "eval", "--device", str(path), "true"])
    assert (status, out) == (2, "")
    assert "nested too deeply" in err


def test_jsonl_device_option_serves_lines_without_a_device(device_file: Path) -> None:
    lines = [
        json.dumps({"expr": 'device.driver == "gpu.nvidia.com"'}),
        json.dumps({"expr": 'device.driver == "gpu.nvidia.com"', "device": {"driver": "z"}}),
    ]
    status, out, _ = run(["cel", "eval", "--jsonl", "--device", str(device_file)], "\n".join(lines))
    assert status == 0
    assert [json.loads(line) for line in out.splitlines()] == [{"result": True}, {"result": False}]


def test_output_is_deterministic() -> None:
    expression = "{'b': [quantity('1')], 'a': [quantity('2k')]}"
    first = run(["cel", "eval", expression])
    assert first == run(["cel", "eval", expression])
    assert first[1] == '{"result": {"a": ["2k"], "b": ["1"]}}\n'


def test_subprocess_through_main(device_file: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "modelplane_cli.main", "cel", "eval", "--device", str(device_file),
         'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))'],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {"result": True}


def test_kubernetes_version_gates_list_attributes_and_includes(tmp_path: Path) -> None:
    path = tmp_path / "device.yaml"
    path.write_text("driver: d\nattributes:\n  ids: {ints: [1, 2]}\n")
    selector = 'device.attributes["d"].ids.includes(2)'
    status, out, _ = run(["cel", "eval", "--kubernetes-version", "1.36", "--device", str(path),
                          selector])  # fmt: skip
    assert (status, json.loads(out)) == (0, {"result": True})
    status, _, err = run(["cel", "eval", "--device", str(path), selector])
    assert status == 2
    assert "needs Kubernetes 1.36 or later" in err
    status, out, _ = run(["cel", "eval", "--kubernetes-version", "1.35", "--jsonl"],
                         json.dumps({"expr": selector, "device": {"driver": "d"}}) + "\n")  # fmt: skip
    assert status == 0
    assert json.loads(out)["error"] == "compile"
    assert "undeclared reference to 'includes'" in json.loads(out)["message"]


def test_a_malformed_kubernetes_version_is_a_usage_error() -> None:
    status, out, err = run(["cel", "eval", "--kubernetes-version", "latest", "true"])
    assert (status, out) == (2, "")
    assert "not a Kubernetes version: 'latest'" in err


H100_CLASS = Path(__file__).resolve().parents[2] / "examples" / "catalog" / "classes.yaml"


@pytest.fixture
def h100_class(tmp_path: Path) -> Path:
    """The example catalog's h100-8x InferenceClass, alone in its file (gpu and nic)."""
    text = H100_CLASS.read_text()
    (doc,) = [d for d in text.split("\n---\n") if "name: h100-8x" in d]
    path = tmp_path / "h100-8x.yaml"
    path.write_text(doc)
    return path


@pytest.mark.parametrize(
    ("name", "expression", "output"),
    [
        ("gpu", 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")', True),
        ("nic", 'device.attributes["nic.nvidia.com"].linkType == "infiniband"', True),
        ("gpu", 'device.driver == "nic.nvidia.com"', False),
    ],
)
def test_device_name_picks_a_device_of_an_inference_class(
    h100_class: Path, name: str, expression: str, output: bool
) -> None:
    code, out, err = run(
        ["cel", "eval", "--device", str(h100_class), "--device-name", name, expression]
    )

    assert (code, json.loads(out)) == (0, {"result": output}), err


def test_an_inference_class_of_several_devices_needs_a_device_name(h100_class: Path) -> None:
    code, out, err = run(["cel", "eval", "--device", str(h100_class), "true"])
    unknown = run(["cel", "eval", "--device", str(h100_class), "--device-name", "tpu", "true"])

    assert (code, out) == (2, "")
    assert "has 2 devices; pick one with --device-name (gpu, nic)" in err
    assert unknown[0] == 2
    assert "has no device 'tpu' (gpu, nic)" in unknown[2]


def test_device_name_needs_device() -> None:
    code, _, err = run(["cel", "eval", "--device-name", "gpu", "true"])

    assert code == 2
    assert "--device-name needs --device" in err
