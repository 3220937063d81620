"""Answering what a pipeline step asks for: required resources, schemas and credentials.

Fetching follows Crossplane's `xfn` fetcher: a name is a Get, anything else a List
(all namespaces when none is given, never defaulted to the composite's), sorted by
namespace then name; what was asked for but not found comes back present and empty.
"""

from __future__ import annotations

import base64
import binascii

import crossplane.function.proto.v1.run_function_pb2 as fnv1

from modelplane.xfn.structs import to_struct
from modelplane_cli.render import wire
from modelplane_cli.render.apis import Apis, CredentialSource, RequiredResource
from modelplane_cli.render.world import ObjectKey, World


class CredentialsError(Exception):
    """A step's credentials Secret is missing or malformed."""


def fetch(world: World, selector: fnv1.ResourceSelector) -> bytes:
    """What Crossplane would fetch for `selector`, as a serialized Resources message."""
    namespace = selector.namespace if selector.HasField("namespace") else None
    if selector.WhichOneof("match") == "match_name":
        key = ObjectKey(selector.api_version, selector.kind, namespace or "", selector.match_name)
        return wire.resources([world.serialized(key)] if key in world else [])
    labels = dict(selector.match_labels.labels) if selector.HasField("match_labels") else None
    _, answer = world.select_resources(
        selector.api_version, selector.kind, namespace=namespace, labels=labels
    )
    return answer


def bootstrap_selector(requirement: RequiredResource) -> fnv1.ResourceSelector:
    """A Composition's declared requirement as the selector a function would have returned."""
    selector = fnv1.ResourceSelector(api_version=requirement.api_version, kind=requirement.kind)
    if requirement.namespace is not None:
        selector.namespace = requirement.namespace
    if requirement.match_name is not None:
        selector.match_name = requirement.match_name
    elif requirement.match_labels is not None:
        selector.match_labels.labels.update(
            {str(k): str(v) for k, v in requirement.match_labels.items()}
        )
    return selector


def schema(apis: Apis, selector: fnv1.SchemaSelector) -> fnv1.Schema:
    """The OpenAPI schema of an XRD-defined kind; empty for kinds the engine cannot describe."""
    found = apis.schema_for(selector.api_version, selector.kind)
    if not found:
        return fnv1.Schema()
    return fnv1.Schema(openapi_v3=to_struct(dict(found)))


def credentials(world: World, source: CredentialSource) -> fnv1.Credentials:
    """A step's credentials, read from the Secret it names."""
    secret = world.get(ObjectKey("v1", "Secret", source.secret_namespace, source.secret_name))
    if secret is None:
        # The client's NotFound, as apimachinery words it (resource plural, name).
        raise CredentialsError(f'secrets "{source.secret_name}" not found')
    data: dict[str, bytes] = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            data[str(key)] = base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError) as exc:
            # Render's own words: the API server never stores such a Secret.
            raise CredentialsError(
                f"data.{key} of Secret {source.secret_namespace}/{source.secret_name} is not base64"
            ) from exc
    # The API server folds stringData into data on write; the world may hold either.
    for key, value in (secret.get("stringData") or {}).items():
        data[str(key)] = str(value).encode()
    return fnv1.Credentials(credential_data=fnv1.CredentialData(data=data))
