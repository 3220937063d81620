"""Cluster health read from the generated models answers what the plain-data read answers."""

from typing import Any

from compose_model_deployment.health import unreachable_cluster_names
from crossplane.function.proto.v1.run_function_pb2 import Resource, RunFunctionRequest
from google.protobuf.struct_pb2 import Struct
from hypothesis import example, given
from hypothesis import strategies as st
from modelplane_models import InferenceCluster

from modelplane.scheduling import unreachable_clusters
from modelplane.xfn import required
from modelplane.xfn.structs import to_dict, to_struct

_texts = st.sampled_from(["Reachable", "Ready", "False", "True", "Unknown", ""])
_scalars = st.one_of(_texts, st.booleans(), st.integers(-2, 2), st.none())
_conditions = st.lists(
    st.one_of(
        st.fixed_dictionaries({}, optional={"type": _scalars, "status": _scalars}),
        _scalars,
    ),
    max_size=4,
)
_objects = st.fixed_dictionaries(
    {},
    optional={
        "metadata": st.one_of(
            st.fixed_dictionaries(
                {}, optional={"name": st.one_of(st.sampled_from(["a", "b"]), _scalars)}
            ),
            _scalars,
        ),
        "status": st.one_of(
            st.fixed_dictionaries({}, optional={"conditions": st.one_of(_conditions, _scalars)}),
            _scalars,
        ),
    },
)


def _unreachable(structs: list[Struct]) -> frozenset[str]:
    req = RunFunctionRequest()
    req.required_resources["c"].items.extend(Resource(resource=s) for s in structs)
    return unreachable_cluster_names(required.resolve(req, "c", InferenceCluster))


@given(st.lists(_objects, max_size=4))
@example(
    [
        {
            "metadata": {"name": ""},
            "status": {"conditions": [{"type": "Reachable", "status": "False"}]},
        }
    ]
)
def test_model_read_matches_the_plain_data_read(objects: list[dict[str, Any]]) -> None:
    structs = [to_struct(obj) for obj in objects]
    expected = unreachable_clusters(to_dict(s) for s in structs)
    assert _unreachable(structs) == expected
    # Read again from the memo, the same bytes answer the same.
    assert _unreachable(structs) == expected


def test_the_first_reachable_condition_decides_and_unknown_is_reachable() -> None:
    def cluster(name: str, *conditions: dict[str, str]) -> Any:
        return to_struct({"metadata": {"name": name}, "status": {"conditions": list(conditions)}})

    down = {"type": "Reachable", "status": "False"}
    up = {"type": "Reachable", "status": "True"}
    assert _unreachable(
        [
            cluster("a", {"type": "Ready", "status": "False"}, down),
            cluster("b", up, down),
            cluster("c", {"type": "Reachable", "status": "Unknown"}),
            cluster("d"),
        ]
    ) == frozenset({"a"})
