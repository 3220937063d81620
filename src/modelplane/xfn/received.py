"""A request received as bytes, with its fetched lists left as bytes until read.

A ModelDeployment's call carries the whole fleet, and parsing those megabytes
into protobuf messages, then serializing them again to key the work done on
them (`modelplane.xfn.required`), cost more than everything the function does
with them. Given the request's bytes (`ComposeFunction.run_serialized`), the
function parses the request without its required resources, and keeps each
fetched list as the bytes it arrived in: a list whose bytes it has seen before
is answered from memory without being parsed at all, and one it has not is
parsed once, when first read.

The lists of a call live in a registry by the id of its (parsed) request, for
the duration of the call (`holding`); `required` reads a list through `listed`
and `items`, whichever way the request arrived.

Crossplane (Go) decodes messages nested 10,000 deep; this parser (upb) stops at
100. A list that cannot be decoded is `UndecodableList`, which the runner reports
as input it cannot read (design/deep-templates.md); a request part that cannot
be is answered fatal (`undecodable`), naming the part (`undecodable_part`).
"""

# pyright: reportMissingTypeStubs=false
# (the SDK's generated protobuf package ships .pyi files but is not marked typed)

import threading
from collections.abc import Generator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf.message import DecodeError

from modelplane.core.issues import Issue
from modelplane.core.vocabulary import Reason
from modelplane.xfn import report, wire


class UndecodableList(Exception):  # noqa: N818 (named for what the input is)
    """The resources fetched for requirement `name` cannot be decoded: an object in
    them nests deeper than this process's protobuf parser reads. Not an
    InvalidInputError, which a compose may catch for a fault of its own input: the
    runner reports it, on the function's validity condition, keeping what runs."""

    def __init__(self, name: str, error: DecodeError) -> None:
        message = (
            f"the resources fetched for requirement {name!r} cannot be decoded ({error}): "
            "an object in them nests deeper than protobuf's decoding limit of 100; "
            "nothing is decided from them and everything composed is kept as it is"
        )
        super().__init__(message)
        self.issues = (Issue("", message, Reason.UNDECODABLE_INPUT),)


@dataclass
class Lists:
    """One call's fetched lists: each as it arrived (a serialized Resources message),
    and parsed once read."""

    serialized: dict[str, bytes]
    deterministic: bool = False
    """Whether each list arrived as its deterministic serialization (the render
    engine's requests), so its bytes say whether its content changed. Crossplane's
    Go client writes every map in a new order on every call: its bytes do not."""
    parsed: dict[str, fnv1.Resources] = field(default_factory=dict[str, fnv1.Resources])

    def resources(self, name: str) -> fnv1.Resources:
        found = self.parsed.get(name)
        if found is None:
            try:
                found = fnv1.Resources.FromString(self.serialized[name])
            except DecodeError as error:
                raise UndecodableList(name, error) from None
            self.parsed[name] = found
        return found

    def items(self, name: str) -> Sequence[fnv1.Resource]:
        return self.resources(name).items


def split(data: bytes, *, deterministic: bool = False) -> tuple[fnv1.RunFunctionRequest, Lists]:
    """The request without its required resources, and those as `Lists`
    (`deterministic`: the caller serialized the request deterministically).

    ValueError (UnicodeDecodeError included) for bytes this reader does not take,
    protobuf's DecodeError for bytes that are not a request."""
    rest = bytearray()
    serialized: dict[str, bytes] = {}
    view = memoryview(data)
    for found in wire.fields(view):
        if found.number != wire.REQUIRED_RESOURCES or found.kind != wire.LENGTH_DELIMITED:
            rest += view[found.start : found.end]
            continue
        entry = view[found.value : found.end]
        name, values = "", list[bytes]()
        for part in wire.fields(entry):
            if part.number not in (wire.MAP_KEY, wire.MAP_VALUE):
                # protobuf drops such an entry whole; the caller parses the request.
                raise ValueError(f"a required_resources entry has a field {part.number}")
            if part.kind != wire.LENGTH_DELIMITED:
                raise ValueError(f"a required_resources entry has a field of wire type {part.kind}")
            if part.number == wire.MAP_KEY:
                name = bytes(entry[part.value : part.end]).decode()
            elif part.number == wire.MAP_VALUE:
                values.append(bytes(entry[part.value : part.end]))
        # A message field given twice is merged, which its bytes joined parse as;
        # a map's last entry for a key wins. Both as protobuf parses them.
        serialized[name] = b"".join(values)
    return fnv1.RunFunctionRequest.FromString(bytes(rest)), Lists(serialized, deterministic)


_HELD: dict[int, Lists] = {}
_HELD_LOCK = threading.Lock()


@contextmanager
def holding(req: fnv1.RunFunctionRequest, lists: Lists) -> Generator[None]:
    """`lists` are `req`'s fetched lists while the block runs."""
    with _HELD_LOCK:
        _HELD[id(req)] = lists
    try:
        yield
    finally:
        with _HELD_LOCK:
            del _HELD[id(req)]


def _held(req: fnv1.RunFunctionRequest, name: str) -> Lists | None:
    with _HELD_LOCK:
        lists = _HELD.get(id(req))
    return lists if lists is not None and name in lists.serialized else None


def listed(req: fnv1.RunFunctionRequest, name: str) -> bytes | None:
    """The fetched list `name` as it arrived, when the request came as deterministic
    bytes; else None."""
    lists = _held(req, name)
    return None if lists is None or not lists.deterministic else lists.serialized[name]


def deterministic(req: fnv1.RunFunctionRequest, name: str) -> bytes:
    """The fetched list `name` serialized deterministically (maps by sorted key): the
    same bytes for the same content, whatever order it arrived in."""
    lists = _held(req, name)
    if lists is None:
        return req.required_resources[name].SerializeToString(deterministic=True)
    if lists.deterministic:
        return lists.serialized[name]
    return lists.resources(name).SerializeToString(deterministic=True)


def fetched(req: fnv1.RunFunctionRequest, name: str) -> bool:
    """Whether Crossplane fetched anything (an empty list included) for `name`."""
    return name in req.required_resources or _held(req, name) is not None


def items(req: fnv1.RunFunctionRequest, name: str) -> Sequence[fnv1.Resource]:
    """The fetched list `name` (empty when nothing was fetched), however it arrived."""
    lists = _held(req, name)
    if lists is not None:
        return lists.items(name)
    if name not in req.required_resources:
        return ()
    return req.required_resources[name].items


_STATES = {
    fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_name[name].number: name
    for name in ("observed", "desired")
}
_COMPOSITE = fnv1.State.DESCRIPTOR.fields_by_name["composite"].number
_RESOURCES = fnv1.State.DESCRIPTOR.fields_by_name["resources"].number


def undecodable_part(data: bytes) -> str:
    """The first part of the serialized request `data` that protobuf cannot decode, as
    a field path (`observed.composite`, `desired.resources[key]`, `context`); empty
    when none alone fails, or its bytes are not a message this reader walks."""
    view = memoryview(data)
    try:
        for found in wire.fields(view):
            part = bytes(view[found.start : found.end])
            if _decodes(fnv1.RunFunctionRequest, part):
                continue
            field = fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_number.get(found.number)
            name = field.name if field is not None else f"field {found.number}"
            state = _STATES.get(found.number)
            if state is None or found.kind != wire.LENGTH_DELIMITED:
                return name
            return f"{state}{_state_part(view[found.value : found.end])}"
    except ValueError:
        return ""
    return ""


def _state_part(state: memoryview) -> str:
    """`.composite` or `.resources[key]`: the part of a serialized State that fails."""
    for found in wire.fields(state):
        if _decodes(fnv1.State, bytes(state[found.start : found.end])):
            continue
        if found.number == _COMPOSITE:
            return ".composite"
        if found.number == _RESOURCES and found.kind == wire.LENGTH_DELIMITED:
            entry = state[found.value : found.end]
            for part in wire.fields(entry):
                if part.number == wire.MAP_KEY and part.kind == wire.LENGTH_DELIMITED:
                    key = bytes(entry[part.value : part.end]).decode(errors="replace")
                    return f".resources[{key}]"
            return ".resources"
    return ""


def _decodes(message: type[fnv1.RunFunctionRequest] | type[fnv1.State], data: bytes) -> bool:
    try:
        message.FromString(data)
    except DecodeError:
        return False
    return True


def undecodable(data: bytes, error: DecodeError) -> fnv1.RunFunctionResponse:
    """The answer to a request whose composite or composed resources protobuf cannot
    decode here (Crossplane's Go parser reads 100 times deeper): fatal, the one answer
    that keeps every composed resource without reading them, since Crossplane then
    neither applies nor deletes anything. Names the part that fails."""
    rsp = fnv1.RunFunctionResponse()
    with suppress(ValueError, DecodeError):
        meta = next(wire.messages(memoryview(data), _META, "meta"), None)
        if meta is not None:
            rsp.meta.tag = fnv1.RequestMeta.FromString(bytes(meta)).tag
    part = undecodable_part(data)
    where = f"its {part}" if part else "it"
    report.fatal(
        rsp,
        Reason.UNDECODABLE_INPUT,
        f"the request cannot be decoded ({error}): {where} nests deeper than protobuf's "
        "decoding limit of 100; nothing is applied or deleted until it is fixed",
    )
    return rsp


_META = fnv1.RunFunctionRequest.DESCRIPTOR.fields_by_name["meta"].number
