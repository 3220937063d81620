"""`modelplane bench cel`: what it times and prints."""

import argparse
import json
from pathlib import Path

import pytest

from modelplane_dev import bench_cel, bench_command

FLEET = {
    "pools": [
        {
            "name": "h100",
            "devices": [
                {
                    "name": "gpu",
                    "driver": "gpu.nvidia.com",
                    "attributes": {"architecture": {"string": "Hopper"}},
                    "capacity": {"memory": "80Gi"},
                },
                {"name": "nic", "driver": "nic.example.com"},
            ],
        }
    ],
    "selectors": ['device.driver == "nic.example.com"'],
}


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="modelplane")
    bench_command.register(parser.add_subparsers())
    args = parser.parse_args(["bench", "cel", *argv])
    return int(args.func(args))


@pytest.fixture(autouse=True)
def short_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_cel, "_ROUND_SECONDS", 0.0)


def test_prints_a_line_per_expression_and_phase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps(FLEET))
    assert _run(["--fleet", str(fleet), "--rounds", "1"]) == bench_cel.EXIT_OK
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expressions = [*bench_cel.SELECTORS, *FLEET["selectors"], *bench_cel.EXPRESSIONS]
    for phase in ("compile", "evaluate"):
        timed = [line for line in lines if line["phase"] == phase and "expr" in line]
        assert [line["expr"] for line in timed] == expressions
        assert all(0 < line["min_us"] <= line["median_us"] for line in timed)
    # The selectors again, as the scheduler runs them: under one decision's budget.
    decided = [line for line in lines if line["phase"] == "evaluate-decision" and "expr" in line]
    assert [line["expr"] for line in decided] == [*bench_cel.SELECTORS, *FLEET["selectors"]]
    assert all(0 < line["min_us"] <= line["median_us"] for line in decided)
    summaries = [line for line in lines if "summary" in line]
    assert [line["phase"] for line in summaries] == ["compile", "evaluate", "evaluate-decision"]
    assert all(line["median_us"] > 0 for line in summaries)


def test_runs_without_a_fleet(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["--rounds", "1"]) == bench_cel.EXIT_OK
    # compile and evaluate: every expression and a summary; evaluate-decision: the selectors.
    assert len(capsys.readouterr().out.splitlines()) == 2 * (
        len(bench_cel.SELECTORS) + len(bench_cel.EXPRESSIONS) + 1
    ) + (len(bench_cel.SELECTORS) + 1)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not JSON"),
        ("[]", "must be a JSON object"),
        ('{"selectors": [1]}', "selectors must be a list"),
        ('{"pools": []}', "no devices"),
        ('{"pools": [{"devices": [{"capacity": {"m": "x"}}]}]}', 'invalid quantity "x"'),
    ],
)
def test_bad_fleet_files_fail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    fleet = tmp_path / "fleet.json"
    fleet.write_text(content)
    assert _run(["--fleet", str(fleet)]) == bench_cel.EXIT_FAILED
    assert message in capsys.readouterr().err


def test_rounds_must_be_positive() -> None:
    with pytest.raises(SystemExit):
        _run(["--rounds", "0"])
