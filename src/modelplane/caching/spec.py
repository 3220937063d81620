"""A ModelCache's spec, read once and checked where its schema cannot check it."""

import re
from dataclasses import dataclass

from modelplane_models.model_cache import ModelCache

from modelplane.cel._decimal import QuantityRangeError
from modelplane.cel.quantity import Quantity, QuantityError
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.vocabulary import Reason
from modelplane.scheduling.adapt.deployment import label_selector
from modelplane.scheduling.label_selector import compile_label_selector
from modelplane.scheduling.model import LabelSelector

SCHEMES = ("hf", "s3", "gs")
"""The URI schemes the download Job can fetch (`native.DOWNLOADERS`). KServe's
LocalModelNamespaceCache fetches these too, with its own storage initializer."""


# One part of a Hugging Face repo id, as the Hub names repos (huggingface_hub's
# validate_repo_id): letters, digits, `_`, `-` and `.`, at most 96, neither starting
# nor ending with `-` or `.`, with no `--` or `..` (checked apart).
_HF_PART = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?")


def _uri_problem(scheme: str, uri: str) -> str | None:
    """Why the downloaders cannot fetch `uri` of a known scheme, or None. An hf:// URI
    is `org/model[:revision]` with exactly one `/`: KServe's storage initializer, which
    fills a KServe cluster's cache, refuses any other shape, and the Hub any other repo
    id; s3:// and gs:// name a bucket."""
    rest = uri[len(scheme) + len("://") :]
    if scheme != "hf":
        if rest.split("/", 1)[0]:
            return None
        return f"{scheme}://bucket/path names no bucket"
    shape = "an hf:// URI is hf://org/model, optionally followed by :revision"
    parts = rest.split("/")
    if len(parts) != 2:
        return f"{shape}, with exactly one '/'"
    org, (model, _, _revision) = parts[0], parts[1].partition(":")
    for what, part in (("org", org), ("model", model)):
        if not _HF_PART.fullmatch(part) or "--" in part or ".." in part:
            return (
                f"{shape}: the {what} {part!r} is not a Hugging Face repo name (letters, "
                "digits, '_', '-' and '.', at most 96, not starting or ending with '-' or "
                "'.', no '--' or '..')"
            )
    return None


@dataclass(frozen=True)
class CacheSpec:
    """A readable ModelCache: what to download, into how much storage, and where."""

    name: str
    namespace: str
    uri: str
    scheme: str
    size: str
    """The quantity as written (it is what the PVC and LocalModelNamespaceCache ask for)."""
    size_bytes: int
    credentials: str | None = None
    cluster_selector: LabelSelector | None = None


def read_cache(cache: ModelCache) -> CacheSpec:
    """The ModelCache's spec; InvalidInputError naming each bad field (a scheme the
    downloader does not fetch, a URI of its scheme it cannot fetch, a size that is not
    a positive quantity, a clusterSelector the API server would refuse)."""
    issues: list[Issue] = []
    metadata = cache.metadata
    name = (metadata.name if metadata else None) or ""
    namespace = (metadata.namespace if metadata else None) or ""
    if not name:
        issues.append(Issue("metadata.name", "is required"))
    spec = cache.spec
    if spec is None:
        raise InvalidInputError([*issues, Issue("spec", "is required")])
    scheme = spec.uri.split("://", 1)[0]
    if scheme not in SCHEMES:
        issues.append(
            Issue(
                "spec.uri",
                f"scheme {scheme!r} is not one the cache downloads "
                f"({', '.join(s + '://' for s in SCHEMES)})",
                Reason.UNSUPPORTED_URI_SCHEME,
            )
        )
    elif problem := _uri_problem(scheme, spec.uri):
        issues.append(Issue("spec.uri", f"{spec.uri!r}: {problem}", Reason.INVALID_URI))
    size_bytes = 0
    try:
        quantity = Quantity.parse(spec.size)
        if quantity.sign() <= 0:
            raise QuantityError("must be positive")
        # Value(), not AsInt64(): a fractional spelling such as 1.5Ti is a storage
        # request the API server takes for a PVC, rounded up to whole bytes as there.
        size_bytes = quantity.value()
        if size_bytes >= 1 << 63:
            raise QuantityError("must be at most 2^63-1 bytes, as Kubernetes counts them")
    # A range error: a spelling such as 1e999999999 parses but has no value in bytes.
    except (QuantityError, QuantityRangeError) as error:
        issues.append(
            Issue(
                "spec.size",
                f"{spec.size!r} is not a storage quantity (2Ti, 700Gi): {error}",
                Reason.INVALID_QUANTITY,
            )
        )
    selector = None if spec.clusterSelector is None else label_selector(spec.clusterSelector)
    try:
        compile_label_selector(selector)
    except InvalidInputError as invalid:
        issues.extend(invalid.issues)
    if issues:
        raise InvalidInputError(issues)
    credentials = spec.credentialsSecretRef.name if spec.credentialsSecretRef else None
    return CacheSpec(
        name=name,
        namespace=namespace,
        uri=spec.uri,
        scheme=scheme,
        size=spec.size,
        size_bytes=size_bytes,
        credentials=credentials,
        cluster_selector=selector,
    )
