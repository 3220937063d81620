"""A cluster's cache storage as its platform declared it (`caching.storage`)."""

from datetime import timedelta

import pytest
from modelplane_models import InferenceCluster

from modelplane.caching.storage import DEFAULT_RETENTION, cache_storage


def _cluster(model_cache: dict[str, str]) -> InferenceCluster:
    return InferenceCluster.model_validate(
        {
            "apiVersion": "modelplane.ai/v1alpha1",
            "kind": "InferenceCluster",
            "metadata": {"name": "c"},
            "spec": {
                "cluster": {
                    "source": "Existing",
                    "existing": {"secretRef": {"name": "c", "namespace": "modelplane-system"}},
                },
                "nodePools": [{"name": "h100", "className": "h100-8x", "nodeCount": 2}],
                "storage": {"modelCache": model_cache},
            },
        }
    )


@pytest.mark.parametrize(
    ("retention", "want"),
    [
        (None, DEFAULT_RETENTION),
        ("0s", timedelta(0)),
        ("0m", timedelta(0)),
        ("90m", timedelta(minutes=90)),
        ("1h30m", timedelta(minutes=90)),
    ],
)
def test_a_retention_is_what_the_platform_wrote(retention: str | None, want: timedelta) -> None:
    model_cache = {"storageClassName": "efs-rwx"}
    if retention is not None:
        model_cache["retention"] = retention
    assert cache_storage(_cluster(model_cache)).retention == want
