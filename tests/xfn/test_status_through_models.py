"""Every function writes its composite's status as its generated Status model,
through `runner.set_status`: no function spells a status field as a string."""

import re
from pathlib import Path

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from modelplane_models.model_cache import ModelCacheClusterStatus, Status
from modelplane_models.model_cache import Phase as PublishedPhase

from modelplane.xfn.runner import set_status
from modelplane.xfn.structs import to_dict

ROOT = Path(__file__).resolve().parents[2]

# A status written by hand: the composite's resource updated directly, the status
# Struct fetched to merge into, a status dict annotated or indexed to set a field.
_HAND_WRITE = re.compile(
    r"""composite\.resource\.update\(|get_or_create_struct\(["']status["']\)"""
    r"""|\bstatus: dict\[|\bstatus\[["']\w+["']\]\s*="""
    r"""|\{\s*["']status["']\s*:"""
)


def _function_sources() -> list[Path]:
    return sorted(p for root in (ROOT / "functions").glob("*/src") for p in root.rglob("*.py"))


def test_no_function_writes_status_as_a_dict() -> None:
    sources = _function_sources()
    assert len(sources) > 40
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sources
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if _HAND_WRITE.search(line)
    ]
    assert found == []


def test_the_hand_write_pattern_catches_hand_writes() -> None:
    for line in (
        'rsp.desired.composite.resource.update({"status": status})',
        'rsp.desired.composite.resource.get_or_create_struct("status").update(x)',
        "status: dict[str, Any] = {}",
        'status["address"] = found',
        "{'status': {'clusters': entries}}",
    ):
        assert _HAND_WRITE.search(line), line
    for line in (
        "set_status(rsp, Status(address=found))",
        'url = mapping(mapping(observed).get("status")).get("url")',
        "status = composite.status",
    ):
        assert not _HAND_WRITE.search(line), line


def test_set_status_writes_the_model_without_unset_fields() -> None:
    rsp = fnv1.RunFunctionResponse()
    entry = ModelCacheClusterStatus(name="a", phase=PublishedPhase.READY, users=2)
    set_status(rsp, Status(clusters=[entry]))
    assert to_dict(rsp.desired.composite.resource) == {
        "status": {"clusters": [{"name": "a", "phase": "Ready", "users": 2}]}
    }
