"""What the API server does to a composite before storing it: default, then validate.

The schema work itself lives in `modelplane_cli.schema`; this module adapts it to the
engine (and lets tests admit everything with `NoAdmission`). `admit` takes
metadata and spec: a status travels with a document that was rendered before
(round trip) and is the engine's own to rewrite. `admit_status` checks the
status a reconcile writes, as the API server checks Crossplane's status apply.

Composed resources that are not composites get the checks every kind gets
(`ValidateObjectMetaAccessor`: name, labels, annotations), since their schemas
are not known here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from modelplane.core.bounded import BoundedMemo
from modelplane_cli.render.world import Obj, View, metadata
from modelplane_cli.schema import SchemaRegistry
from modelplane_cli.schema.objectmeta import check_root_meta
from modelplane_cli.schema.resource import Schema

# Bodies whose admission is kept: every composite and composed body of a large render.
_ADMITTED_KEPT = 4096


class Admission(Protocol):
    """What the API server stores of a write.

    An answer is the caller's to change at its top level and in its metadata's
    top level (a reconcile sets a uid, replaces labels); anything deeper may be
    shared with other answers and must be replaced, never changed in place, as
    with any object read from the world.
    """

    def admit(self, obj: View) -> tuple[Obj, list[str]]:
        """`obj` defaulted as the API server would, and its errors as "path: message"."""
        ...

    def defaulted(self, obj: View) -> Obj:
        """`admit(obj)[0]`, for a caller that does not read the errors: they are not
        worked out (unless already known)."""
        ...

    def admit_update(self, obj: View, old: View) -> tuple[Obj, list[str]]:
        """As `admit`, for an update of the stored `old` to `obj`: transition rules
        (`oldSelf`) run too."""
        ...

    def admit_status(self, obj: View) -> tuple[Any, list[str]]:
        """A composite's status as a server-side apply of it stores it, and its errors.

        The status is shared (it may be the answer to an earlier, equal write)."""
        ...


class SchemaAdmission:
    """Admission by the XRDs' OpenAPI schemas and CEL rules, through `modelplane_cli.schema`.

    Admission is a pure function of the object's body, and a render admits the
    same composed bodies round after round, so each body's answer is kept, keyed
    by its repr: exact for plain data, key order and key types included (the
    defaulted object keeps the order). A kept answer is handed out shared below
    its top level and its metadata (`Admission`), not deep-copied: every caller
    stores it through `World.put`, which copies what it keeps.
    """

    def __init__(self, registry: SchemaRegistry) -> None:
        self._registry = registry
        self._admitted: BoundedMemo[str, tuple[Obj, list[str]]] = BoundedMemo(_ADMITTED_KEPT)
        self._statuses: BoundedMemo[str, tuple[Any, list[str]]] = BoundedMemo(_ADMITTED_KEPT)

    @classmethod
    def from_files(cls, xrd_files: Sequence[Path]) -> SchemaAdmission:
        return cls(SchemaRegistry.from_files(xrd_files))

    def _schema(self, obj: View) -> Schema | None:
        return self._registry.get(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))

    def admit(self, obj: View) -> tuple[Obj, list[str]]:
        schema = self._schema(obj)
        if schema is None:
            return _owned(obj), []
        body, status = _split(obj)
        key = repr(body)
        known = self._admitted.get(key)
        if known is None:
            # Schema.admit defaults a deep copy, so the body need not be copied here.
            defaulted, errors = schema.admit(body)
            known = (dict(defaulted), [str(e) for e in errors])
            self._admitted.put(key, known)
        return _with_status(_owned(known[0]), status), list(known[1])

    def admit_update(self, obj: View, old: View) -> tuple[Obj, list[str]]:
        """Not kept, unlike `admit`: only an input that replaces an observed object
        is an update, once per render."""
        schema = self._schema(obj)
        if schema is None:
            return _owned(obj), []
        body, status = _split(obj)
        defaulted, errors = schema.admit_update(body, _split(old)[0])
        return _with_status(_owned(defaulted), status), [str(e) for e in errors]

    def defaulted(self, obj: View) -> Obj:
        """What `admit` stores of `obj`, without validating it: defaulting is the same
        first step of `Schema.admit` (which validates the defaulted copy), so the
        object is the same, and only the verdict, which the caller drops, is skipped."""
        schema = self._schema(obj)
        if schema is None:
            return _owned(obj)
        body, status = _split(obj)
        known = self._admitted.get(repr(body))
        defaulted = _owned(known[0]) if known is not None else dict(schema.default(body))
        return _with_status(defaulted, status)

    def admit_status(self, obj: View) -> tuple[Any, list[str]]:
        """The status pruned of fields its schema lacks, and what the schema refuses.

        A status write is checked against the XRD's status schema like any update.
        Unknown fields are dropped, not refused: Crossplane's apply sets no
        `fieldValidation`, and the API server's default for that is Warn.
        """
        status = obj.get("status")
        schema = self._schema(obj)
        if schema is None or status is None:
            return status, []
        body: Obj = {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "metadata": {k: v for k, v in metadata(obj).items() if k in ("name", "namespace")},
        }
        if not schema.status_stands_alone:
            body["spec"] = obj.get("spec")
        # Without a spec (when it cannot change the verdict), the check is smaller,
        # and equal statuses of composites whose specs differ share one answer.
        body["status"] = status
        key = repr(body)
        known = self._statuses.get(key)
        if known is None:
            # One pruning pass gives both the stored status and the checks' input.
            pruned_body, refused = schema.prune_and_validate(body)
            pruned = pruned_body.get("status")
            errors = [
                str(e)
                for e in refused
                if e.path.startswith("status")
                and not e.message.startswith("unknown field")
                and not _unstamped(e.path, e.message)
            ]
            known = (pruned, errors)
            self._statuses.put(key, known)
        return known[0], list(known[1])


def _split(obj: View) -> tuple[Obj, Any]:
    """`obj` without its status, and the status: admission checks the one and puts
    the other back as it was (a status is admitted by `admit_status`)."""
    return {k: v for k, v in obj.items() if k != "status"}, obj.get("status")


def _with_status(admitted: Obj, status: Any) -> Obj:
    if status is not None:
        admitted["status"] = status
    return admitted


def _owned(obj: View) -> Obj:
    """`obj` with its top level and its metadata's copied: what a caller may change."""
    out: Obj = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = dict(cast(Obj, meta))
    return out


def _unstamped(path: str, message: str) -> bool:
    """A condition without `lastTransitionTime`: the engine stamps no times on its
    conditions (design.md, "Render and Crossplane"), where Crossplane's always carry one."""
    return (
        path.startswith("status.conditions[")
        and path.endswith("].lastTransitionTime")
        and message == "Required value"
    )


class NoAdmission:
    """Stores objects as given; for tests and for worlds without schemas."""

    def admit(self, obj: View) -> tuple[Obj, list[str]]:
        return _owned(obj), []

    def defaulted(self, obj: View) -> Obj:
        return _owned(obj)

    def admit_update(self, obj: View, old: View) -> tuple[Obj, list[str]]:
        return _owned(obj), []

    def admit_status(self, obj: View) -> tuple[Any, list[str]]:
        return obj.get("status"), []


def metadata_errors(obj: View) -> list[str]:
    """What the API server rejects in any object's metadata, whatever its kind.

    Scope is the engine's own check, so a namespace is checked only when present.
    """
    meta = metadata(obj)
    return [str(p.error) for p in check_root_meta(meta, namespaced=bool(meta.get("namespace")))]
