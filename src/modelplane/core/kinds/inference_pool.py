"""Gateway API Inference Extension InferencePool (v1): the pods one endpoint picker chooses among.

The gateway implementation reports it per parent Gateway; whether a request
reaches it is what its HTTPRoute's status says, so the pool itself is ready once
created.
"""

from collections.abc import Mapping
from typing import Any, Final

from .service import ObjectKind


class InferencePool(ObjectKind):
    kind = "InferencePool"
    api_version = "inference.networking.k8s.io/v1"

    def healthy_status(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        return {}


INFERENCE_POOL: Final = InferencePool()
