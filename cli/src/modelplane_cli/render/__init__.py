"""`modelplane render`: Crossplane's reconcile loop, run locally over a whole fleet.

Load documents into a simulated API server (`world`), admit composites through
their XRDs (`admission`), then reconcile every composite through its Composition
pipeline, calling the real functions (`runners`) round after round (`engine`)
until nothing changes. `output` and `summary` print the result.
"""

from modelplane_cli.render.admission import Admission, NoAdmission, SchemaAdmission
from modelplane_cli.render.apis import ApiError, Apis, default_apis_dir
from modelplane_cli.render.engine import DEFAULT_ROUNDS, Engine, render, render_async
from modelplane_cli.render.loader import Document, InputError, parse_stream, read_documents
from modelplane_cli.render.result import RenderResult
from modelplane_cli.render.runners import (
    FunctionRegistry,
    GrpcFunctions,
    InProcessFunctions,
    Runner,
)

__all__ = [
    "DEFAULT_ROUNDS",
    "Admission",
    "ApiError",
    "Apis",
    "Document",
    "Engine",
    "FunctionRegistry",
    "GrpcFunctions",
    "InProcessFunctions",
    "InputError",
    "NoAdmission",
    "RenderResult",
    "Runner",
    "SchemaAdmission",
    "default_apis_dir",
    "parse_stream",
    "read_documents",
    "render",
    "render_async",
]
