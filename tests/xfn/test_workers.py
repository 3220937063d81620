"""How many processes a function composes on by default (`--workers 0`)."""

from pathlib import Path

import click
import pytest
from compose_model_deployment.main import main

from modelplane.xfn import workers


@pytest.mark.parametrize(
    ("cpu_max", "cpus", "expected"),
    [
        ("200000 100000\n", 64, 2),  # a limit of 2 cores
        ("150000 100000\n", 64, 2),  # 1.5 cores rounds up
        ("50000 100000\n", 64, 1),  # half a core is still one process
        ("400000 100000\n", 2, 4),  # the limit decides, not the node's CPUs
        ("max 100000\n", 64, workers.UNLIMITED_WORKERS),  # no limit: capped
        ("max 100000\n", 1, 1),  # no limit, one CPU
        (None, 64, workers.UNLIMITED_WORKERS),  # no cgroup v2 file
        ("garbage\n", 1, 1),
    ],
)
def test_default_workers_follow_the_cpu_limit_and_are_capped_without_one(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cpu_max: str | None,
    cpus: int,
    expected: int,
) -> None:
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max)
    monkeypatch.setattr(workers, "_CPU_MAX", path)
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda _pid: set(range(cpus)))
    assert workers.default_workers() == expected


def test_without_cgroup_v2_or_cpu_affinity_the_cpu_count_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Off Linux there is no `os.sched_getaffinity`: a function still starts."""
    monkeypatch.setattr(workers, "_CPU_MAX", tmp_path / "absent")
    monkeypatch.delattr(workers.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 1)
    assert workers.default_workers() == 1
    monkeypatch.setattr(workers.os, "cpu_count", lambda: None)
    assert workers.default_workers() == 1
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 16)
    assert workers.default_workers() == workers.UNLIMITED_WORKERS


def test_a_function_command_sizes_its_workers_to_the_cpu_limit_unless_told() -> None:
    option = next(p for p in main.params if p.name == "workers")
    assert option.default == 0
    assert option.envvar == "WORKERS"
    # --workers 1 stays possible (compose in the server's own process); below 0 is not.
    assert option.type_cast_value(click.Context(main), "1") == 1
    with pytest.raises(click.BadParameter):
        option.type_cast_value(click.Context(main), "-1")
