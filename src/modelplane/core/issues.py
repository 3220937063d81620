"""One issue type for every layer: what is wrong, where, and how bad.

Like apimachinery's `field.ErrorList`: the adapters that read API objects, the
scheduler, the renderer, the scheduler conventions and the platform checks all
report problems as `Issue`s naming the field path inside the object at fault.
The glue turns a list of them into one condition and one Warning event each, the
same way in every function (`modelplane.xfn.report.report_issues`).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any, TypeVar, get_args

from modelplane_models.shapes import Condition
from pydantic import BaseModel, ValidationError

from modelplane.core.numbers import restore_ints
from modelplane.core.observed import with_readable_conditions
from modelplane.core.vocabulary import Reason

M = TypeVar("M", bound=BaseModel)


class Severity(StrEnum):
    ERROR = "Error"
    """The input cannot be acted on: keep whatever was composed from it before."""
    WARNING = "Warning"
    """Reported as a Warning event; the work goes ahead."""


@dataclass(frozen=True, order=True, slots=True)
class Issue:
    """One problem: the field path at fault (empty for the object as a whole), what is
    wrong, the `Reason` word a condition or event carries, and its severity."""

    path: str
    message: str
    reason: str = Reason.INVALID_SPEC
    severity: Severity = Severity.ERROR

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def under(self, prefix: str) -> "Issue":
        """The same issue, its path placed under `prefix` (an object inside a larger one)."""
        if not prefix:
            return self
        if not self.path or self.path.startswith("["):
            path = f"{prefix}{self.path}"
        else:
            path = f"{prefix}.{self.path}"
        return Issue(path, self.message, self.reason, self.severity)


def warning(path: str, message: str, reason: str = Reason.INVALID_SPEC) -> Issue:
    return Issue(path, message, reason, Severity.WARNING)


def errors(issues: Iterable[Issue]) -> list[Issue]:
    return [issue for issue in issues if issue.is_error]


def has_errors(issues: Iterable[Issue]) -> bool:
    return any(issue.is_error for issue in issues)


def unique(issues: Iterable[Issue]) -> list[Issue]:
    """Drop repeats, keeping the first occurrence's position."""
    return list(dict.fromkeys(issues))


class InvalidInputError(ValueError):
    """Raised where a layer cannot go on; carries every issue it found, in order."""

    def __init__(self, issues: Sequence[Issue]) -> None:
        if not issues:
            raise ValueError("InvalidInputError needs at least one issue")
        self.issues = tuple(issues)
        super().__init__("; ".join(map(str, self.issues)))

    @classmethod
    def at(cls, path: str, message: str, reason: str = Reason.INVALID_SPEC) -> "InvalidInputError":
        """The error of one issue: `path` is at fault, `message` says how."""
        return cls([Issue(path, message, reason)])


def field_path(location: Sequence[int | str]) -> str:
    """A pydantic error location as a Kubernetes field path: `spec.devices[1].count`."""
    path = ""
    for part in location:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else part
    return path


def from_validation_error(error: ValidationError, reason: str = Reason.INVALID_SPEC) -> list[Issue]:
    """Every error of a pydantic validation, as issues sorted by path.

    Sorted because the order of a protobuf Struct's map, and so of the errors, may
    differ from one process to the next; a condition message must not.
    """
    found = {
        Issue(field_path(e["loc"]), e["msg"], reason)
        for e in error.errors(include_url=False, include_input=False)
    }
    return sorted(found)


def parse_object(model: type[M], obj: Mapping[str, Any], *, ints_restored: bool = False) -> M:
    """`obj` read into its generated model; InvalidInputError naming every bad field.

    The one way every function reads an API object. The generated models are strict
    (`--strict-types` in schemas/generate.py): a boolean, a string or a fractional
    number is no integer, a number no string, as the XRD's schema validates; only
    the integral doubles a protobuf Struct turns integers into are integers again
    (already, when `ints_restored`: `modelplane.xfn.structs.plain`). Status
    conditions that do not read are left out (`observed.with_readable_conditions`).
    """
    if _reads_conditions_as_one(model):
        # The model reads each entry of status.conditions as `Condition`, as
        # `with_readable_conditions` does: when the whole object reads, every condition
        # did, and filtering them would hand the same object back (but for null
        # conditions, which it makes an empty list). Reading each condition first, then
        # again within the whole, read each one twice.
        try:
            parsed = model.model_validate(obj if ints_restored else restore_ints(obj))
        except ValidationError:
            parsed = None  # read below without what does not read: the same issues
        if parsed is not None and not _null_conditions(parsed):
            return parsed
    try:
        readable = with_readable_conditions(obj)
        return model.model_validate(readable if ints_restored else restore_ints(readable))
    except ValidationError as error:
        raise InvalidInputError(from_validation_error(error)) from error


_CONDITIONS = "conditions"


def _null_conditions(parsed: BaseModel) -> bool:
    """Whether the model was given status.conditions as null."""
    status = getattr(parsed, "status", None)
    return (
        isinstance(status, BaseModel)
        and _CONDITIONS in status.model_fields_set
        and getattr(status, _CONDITIONS, None) is None
    )


@cache
def _reads_conditions_as_one(model: type[BaseModel]) -> bool:
    """Whether `model`'s status is a model whose `conditions` is `list[Condition] | None`:
    every generated composite, workload and Object model. A property of the class, so
    kept per class."""
    field = model.model_fields.get("status")
    for status in get_args(field.annotation) if field is not None else ():
        if isinstance(status, type) and issubclass(status, BaseModel):
            # The field's declaration (a class's, not an object's conditions).
            declared = status.model_fields.get(_CONDITIONS)
            found = get_args(declared.annotation) if declared is not None else ()
            return set(found) == {list[Condition], type(None)}
    return False
