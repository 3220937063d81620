"""Required resources with three states, because "not fetched yet" is not "absent".

The SDK returns an empty list both before Crossplane has resolved a requirement
and after it resolved to nothing. Treating the first as the second would make a
function believe a cluster or class vanished and stop emitting what runs there.

With a model, each resource is read into it once, here; one that does not parse is
kept aside with its issues instead of being dropped silently, so the caller can
hold whatever depends on it rather than treat it as gone. A resource whose bytes
were read into the same model before, in this process, is not read again
(`memo`): the model read then is the answer.
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar, cast, overload

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from pydantic import BaseModel

from modelplane.core.issues import InvalidInputError, Issue, parse_object
from modelplane.xfn import memo, received
from modelplane.xfn.memo import digest, digest_bytes, digest_items, digest_list
from modelplane.xfn.structs import pick, plain, to_dict

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class State(enum.Enum):
    UNRESOLVED = "Unresolved"
    ABSENT = "Absent"
    PRESENT = "Present"


class Unfetched(Exception):  # noqa: N818 (a state, not a failure)
    """A compose stops here: it has stated every requirement this request lets it
    know, and one of them is not fetched yet. Raised only by `stop_unless_fetched`,
    the one way a function stops for what Crossplane has not fetched.

    Such a call is never the one Crossplane keeps (see `unfetched`), so the runner
    answers it with the requirements alone and nothing after them is worth doing.
    """


def unfetched(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> list[str]:
    """The requirements `rsp` states whose key `req` lacks, sorted: not fetched yet.

    Crossplane's fetch loop (`FetchingFunctionRunner.RunFunction`) returns only a
    response whose requirements equal those it fetched for that very request, and
    it puts every key it fetched into the request (an empty list when nothing
    matched). A response naming a key its request lacks is therefore never the
    one returned: Crossplane fetches and calls again, keeping only its
    requirements and its context. A key present with an empty list is not
    unfetched: that answer may be final.
    """
    return sorted(name for name in rsp.requirements.resources if not received.fetched(req, name))


def stop_unless_fetched(req: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
    """Raise `Unfetched` when a requirement stated so far is not fetched yet. Such an
    answer is never the one Crossplane keeps, so a requirement stated only after
    something fetched is read (a deployment's per-cluster replicas) may come on a
    later call; what a call states before it stops must be what the full compose
    states for the same request, or the fetch loop does not settle."""
    if unfetched(req, rsp):
        raise Unfetched


@dataclass(frozen=True)
class Unreadable:
    """A required resource that did not parse: its name, and why.

    `name` is `#<index>` (which no Kubernetes name can be) when even the name
    cannot be read; `named` tells the two apart.
    """

    name: str
    issues: tuple[Issue, ...]
    named: bool = True


@dataclass(frozen=True)
class Required(Generic[T]):
    state: State
    items: list[T] = field(default_factory=list[T])
    unreadable: list[Unreadable] = field(default_factory=list[Unreadable])
    digests: tuple[bytes, ...] = ()
    """A digest of each fetched object's bytes, in fetch order (read into a model
    only): the key its model is kept by."""

    @property
    def resolved(self) -> bool:
        return self.state is not State.UNRESOLVED

    def first(self) -> T | None:
        return self.items[0] if self.items else None


@overload
def resolve(req: fnv1.RunFunctionRequest, name: str) -> Required[dict[str, Any]]: ...
@overload
def resolve(req: fnv1.RunFunctionRequest, name: str, model: type[M]) -> Required[M]: ...
def resolve(
    req: fnv1.RunFunctionRequest, name: str, model: type[M] | None = None
) -> Required[dict[str, Any]] | Required[M]:
    """What Crossplane fetched for requirement `name`, as dicts or read into `model`.
    Read into a model, the models may be those an earlier call got for the same
    bytes: callers never change a model."""
    if not received.fetched(req, name):
        return Required(State.UNRESOLVED)
    if model is None:
        found = received.items(req, name)
        state = State.PRESENT if found else State.ABSENT
        return Required(state, [to_dict(item.resource) for item in found])
    # A fleet unchanged since an earlier call is that call's answer: found by the
    # list's bytes as they arrived when those are deterministic (the render engine's),
    # or by each object's version (`trust_resource_versions`), or by the list
    # serialized deterministically. Each object's model is found the same way.
    memos = memo.active() or memo.Memos()
    listed = received.listed(req, name)
    whole: tuple[type[BaseModel], bytes] | None = None
    if listed is not None:
        # The same list as the last call's of that name, compared byte for byte: a
        # comparison costs a small part of a digest of the same bytes.
        last = memos.last_lists.get((model, name))
        if last is not None and last[0] == listed:
            return _copied(last[1])
        whole = (model, digest_list(listed))
        known = memos.resolved.get(whole)
        if known is not None:
            memos.last_lists.put((model, name), (listed, known))
            return _copied(known)
    found = received.items(req, name)
    digests = _version_keys(found) if _trust_versions else None
    if digests is None:
        data = listed
        if data is None or whole is None:
            data = received.deterministic(req, name)
            whole = (model, digest_list(data))
            known = memos.resolved.get(whole)
            if known is not None:
                return _copied(known)
        digests = _item_digests(data, found)
    else:
        whole = (model, digest_list(b"".join(digests)))
        known = memos.resolved.get(whole)
        if known is not None:
            return _copied(known)
    items: list[M] = []
    unreadable: list[Unreadable] = []
    for index, item in enumerate(found):
        key = (model, digests[index])
        cached = memos.models.get(key)
        if cached is not None:
            items.append(cast(M, cached))
            continue
        obj = plain(item.resource)
        try:
            parsed = parse_object(model, obj, ints_restored=True)
        except InvalidInputError as error:
            unreadable.append(_unreadable(obj, index, error))
            continue
        memos.models.put(key, parsed)
        items.append(parsed)
    state = State.PRESENT if found else State.ABSENT
    kept = Required(state, items, unreadable, digests)
    memos.resolved.put(whole, kept)
    if listed is not None:
        memos.last_lists.put((model, name), (listed, kept))
    # What is kept is shared; these lists are the caller's own.
    return Required(state, list(items), list(unreadable), digests)


def _copied(known: Required[Any]) -> Required[Any]:
    # The models are shared; the lists are the caller's own.
    return replace(known, items=list(known.items), unreadable=list(known.unreadable))


def trust_resource_versions(trust: bool) -> None:
    """Key fetched objects by their uid and resourceVersion, not by their bytes.

    The API server gives an object a new resourceVersion on every write, so one
    uid at one resourceVersion is one content: Crossplane's Go client sends that
    content with its maps in a new order on every call, and reading two fields is
    cheaper than serializing every object again to find it unchanged. Only the
    served function trusts them (`serve`): the render engine's world and the tests
    write objects without keeping resourceVersion up to date."""
    global _trust_versions  # noqa: PLW0603 (one setting per process)
    _trust_versions = trust


_trust_versions = False


def _version_keys(found: Sequence[fnv1.Resource]) -> tuple[bytes, ...] | None:
    """A key per object from its uid and resourceVersion, or None when any lacks one."""
    keys: list[bytes] = []
    for item in found:
        fields = item.resource.fields
        metadata = fields["metadata"].struct_value.fields if "metadata" in fields else None
        if metadata is None:
            return None
        uid = metadata["uid"].string_value if "uid" in metadata else ""
        version = metadata["resourceVersion"].string_value if "resourceVersion" in metadata else ""
        if not uid or not version:
            return None
        keys.append(version_key(uid, version))
    return tuple(keys)


def version_key(uid: str, version: str) -> bytes:
    """The digest standing for the object `uid` at `version` (never a content digest:
    its input starts with a tag no serialized Struct starts with)."""
    return digest_bytes(b"\xffresourceVersion\x00" + uid.encode() + b"\x00" + version.encode())


def _item_digests(data: bytes, found: Sequence[fnv1.Resource]) -> tuple[bytes, ...]:
    """Each fetched object's digest, read from the list's bytes where those say
    plainly what protobuf parsed, else from each parsed object."""
    try:
        digests = digest_items(data)
    except ValueError:
        digests = ()
    if len(digests) != len(found):
        digests = tuple(digest(item.resource) for item in found)
    return digests


def resolve_fields(
    req: fnv1.RunFunctionRequest, name: str, *paths: tuple[str, ...]
) -> Required[dict[str, Any]]:
    """What Crossplane fetched for `name`, each resource reduced to the fields at `paths`
    (`structs.pick`): for many large objects of which a few fields are read."""
    if not received.fetched(req, name):
        return Required(State.UNRESOLVED)
    found = received.items(req, name)
    state = State.PRESENT if found else State.ABSENT
    return Required(state, [pick(item.resource, *paths) for item in found])


@dataclass(frozen=True)
class Parsed(Generic[M]):
    items: list[M]
    unreadable: list[Unreadable]


def parse_all(objects: Iterable[dict[str, Any]], model: type[M]) -> Parsed[M]:
    """Each object read into `model`; one that does not parse is kept aside with its issues."""
    items: list[M] = []
    unreadable: list[Unreadable] = []
    for index, obj in enumerate(objects):
        try:
            items.append(parse_object(model, obj))
        except InvalidInputError as error:
            unreadable.append(_unreadable(obj, index, error))
    return Parsed(items, unreadable)


def _unreadable(obj: dict[str, Any], index: int, error: InvalidInputError) -> Unreadable:
    name = _name_of(obj)
    return Unreadable(name or f"#{index}", error.issues, named=bool(name))


def _name_of(obj: dict[str, Any]) -> str:
    metadata = obj.get("metadata")
    name = cast(dict[str, Any], metadata).get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else ""


def require_named(
    rsp: fnv1.RunFunctionResponse,
    name: str,
    api_version: str,
    kind: str,
    object_name: str,
    *,
    namespace: str | None = None,
) -> None:
    response.require_resources(
        rsp, name, api_version, kind, match_name=object_name, namespace=namespace
    )


def require_all(
    rsp: fnv1.RunFunctionResponse,
    name: str,
    api_version: str,
    kind: str,
    namespace: str | None = None,
) -> None:
    """Every object of a kind (in one namespace, or cluster-wide when namespace is None)."""
    response.require_resources(rsp, name, api_version, kind, namespace=namespace)


def require_labelled(
    rsp: fnv1.RunFunctionResponse,
    name: str,
    api_version: str,
    kind: str,
    labels: dict[str, str],
    namespace: str | None = None,
) -> None:
    """Every object of a kind carrying `labels`, in `namespace` (every namespace when
    None)."""
    response.require_resources(
        rsp, name, api_version, kind, match_labels=labels, namespace=namespace
    )
