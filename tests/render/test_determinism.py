"""Same input, same bytes: across runs, input orders, and gRPC versus in-process calls."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane_cli.render import output

from .support import PARENT, render_text, write_apis

FLEET = [
    PARENT,
    PARENT.replace("name: web,", "name: api,").replace("children: 2", "children: 3"),
    """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-a}
data: {replicas: "2"}
""",
    """
apiVersion: example.org/v1
kind: XPlatform
metadata: {name: east}
spec: {region: us-east}
""",
]


@pytest.fixture(scope="module")
def apis_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_apis(tmp_path_factory.mktemp("apis"))


@pytest.fixture(scope="module")
def reference(apis_dir: Path) -> str:
    return output.to_yaml(render_text(apis_dir, "---\n".join(FLEET)))


def test_grpc_and_in_process_give_byte_identical_output(apis_dir: Path, reference: str) -> None:
    over_grpc = render_text(apis_dir, "---\n".join(FLEET), in_process=False)

    assert over_grpc.ok
    assert output.to_yaml(over_grpc) == reference
    assert output.to_json(over_grpc) == output.to_json(
        render_text(apis_dir, "---\n".join(FLEET), in_process=True)
    )


def test_rendering_twice_gives_the_same_bytes(apis_dir: Path, reference: str) -> None:
    assert output.to_yaml(render_text(apis_dir, "---\n".join(FLEET))) == reference


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(order=st.permutations(FLEET))
def test_input_order_does_not_change_the_output(
    apis_dir: Path, reference: str, order: list[str]
) -> None:
    assert output.to_yaml(render_text(apis_dir, "---\n".join(order))) == reference
