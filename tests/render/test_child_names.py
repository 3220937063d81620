"""Names of composed resources a function leaves unnamed, as Crossplane v2.3 gives them:
`names.ChildName` over the composite's uid and the composition resource name, from
the `generateName` prefix, which the object keeps."""

from __future__ import annotations

import hashlib
from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from crossplane.function import resource

from modelplane_cli.render.childnames import child_name, valid_name

from .support import PARENT, ChildRunner, default_runners, find, one, render_text


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        # sha256("uid-1" + "workload") starts 80c4112348a1.
        ("web-", "web-80c4112348a1"),
        ("web", "web-80c4112348a1"),
        ("", "80c4112348a1"),
        # Too long: the prefix is cut to 51 characters, the last one a hyphen.
        ("a" * 60 + "-", "a" * 50 + "-80c4112348a1"),
        ("a" * 50 + "-bbbbbbbb-", "a" * 50 + "-80c4112348a1"),
    ],
)
def test_child_name_is_crossplanes(prefix: str, expected: str) -> None:
    assert child_name(prefix, "uid-1", "workload") == expected
    assert len(expected) <= 63


def test_valid_name_allows_colons_only_in_rbac_kinds() -> None:
    assert valid_name("system:web", "rbac.authorization.k8s.io", "ClusterRole")
    assert not valid_name("system:web", "", "ConfigMap")
    assert not valid_name("Web", "", "ConfigMap")


def test_an_unnamed_composed_resource_is_named_from_its_composites_uid(apis_dir: Path) -> None:
    result = render_text(apis_dir, PARENT)

    for child in find(result, "XChild"):
        uid = child["metadata"]["uid"]
        suffix = hashlib.sha256(f"{uid}workload".encode()).hexdigest()[:12]
        (obj,) = [
            o for o in find(result, "Object") if o["metadata"]["ownerReferences"][-1]["uid"] == uid
        ]
        assert obj["metadata"]["name"] == f"web-{suffix}"
        assert obj["metadata"]["generateName"] == "web-"


def test_a_generate_name_the_function_sets_is_the_prefix(apis_dir: Path) -> None:
    class Prefixed(ChildRunner):
        def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
            super().compose(request, rsp)
            body = resource.struct_to_dict(rsp.desired.resources["workload"].resource)
            body["metadata"] = {"generateName": "engine-"}
            resource.update(rsp.desired.resources["workload"], body)

    result = render_text(apis_dir, PARENT, {**default_runners(), "fn-child": Prefixed()})

    uid = one(result, "XChild", "web-0")["metadata"]["uid"]
    suffix = hashlib.sha256(f"{uid}workload".encode()).hexdigest()[:12]
    obj = one(result, "Object", f"engine-{suffix}")
    assert obj["metadata"]["generateName"] == "engine-"
