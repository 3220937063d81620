"""Kubernetes LabelSelector semantics over InferenceCluster labels, with explanations.

Validation follows the API server's `ValidateLabelSelector`: keys are qualified
names, values are label values, `In`/`NotIn` need at least one value and
`Exists`/`DoesNotExist` take none; operators are case-sensitive. Matching ANDs
every requirement; `NotIn` and `DoesNotExist` hold when the label is absent. An
absent or empty selector selects every cluster.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from modelplane_models.shapes import Operator

from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.labels import key_error, value_error
from modelplane.core.vocabulary import Reason
from modelplane.scheduling.model import LabelRequirement, LabelSelector

# The operators, as the XRDs' LabelSelector declares them (`shapes.Operator`).
_WITH_VALUES = (Operator.IN, Operator.NOT_IN)
_WITHOUT_VALUES = (Operator.EXISTS, Operator.DOES_NOT_EXIST)
_REASON = Reason.INVALID_CLUSTER_SELECTOR


@dataclass(frozen=True)
class _Requirement:
    key: str
    operator: str
    values: frozenset[str]
    text: str

    def explain(self, labels: Mapping[str, str]) -> str | None:
        """None when the labels satisfy this requirement, else why not."""
        value = labels.get(self.key)
        if self.operator == Operator.IN:
            ok = value is not None and value in self.values
        elif self.operator == Operator.NOT_IN:
            ok = value is None or value not in self.values
        elif self.operator == Operator.EXISTS:
            ok = value is not None
        else:
            ok = value is None
        if ok:
            return None
        found = f"no label {self.key}" if value is None else f"label {self.key} is {value!r}"
        return f"{self.text}: {found}"


@dataclass(frozen=True)
class CompiledLabelSelector:
    requirements: tuple[_Requirement, ...]

    def explain(self, labels: Mapping[str, str]) -> str | None:
        """None when the labels match, else the first failed requirement and why."""
        for requirement in self.requirements:
            reason = requirement.explain(labels)
            if reason is not None:
                return reason
        return None

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.explain(labels) is None

    def implied_labels(self) -> dict[str, str]:
        """Labels every matching set carries: each `In` of one value (matchLabels
        compile to those). Objects carrying them are a superset of what matches,
        which is what a label List can fetch; empty when nothing is implied. A key
        implied with two values matches nothing, so either value is a superset."""
        return {
            r.key: next(iter(r.values))
            for r in self.requirements
            if r.operator == Operator.IN and len(r.values) == 1
        }


MATCH_ALL = CompiledLabelSelector(())


def _check_key(key: str, where: str, problems: list[Issue]) -> None:
    error = key_error(key)
    if error is not None:
        problems.append(Issue(where, f"invalid label key {key!r}: {error}", _REASON))


def _check_value(value: str, where: str, problems: list[Issue]) -> None:
    error = value_error(value)
    if error is not None:
        problems.append(Issue(where, f"invalid label value {value!r}: {error}", _REASON))


def _expression(
    requirement: LabelRequirement, where: str, problems: list[Issue]
) -> _Requirement | None:
    _check_key(requirement.key, f"{where}.key", problems)
    operator = requirement.operator
    if operator in _WITH_VALUES:
        if not requirement.values:
            problems.append(
                Issue(f"{where}.values", f"must be non-empty for operator {operator}", _REASON)
            )
        for i, value in enumerate(requirement.values):
            _check_value(value, f"{where}.values[{i}]", problems)
        listed = ", ".join(sorted(set(requirement.values)))
        text = f"{requirement.key} {operator} ({listed})"
    elif operator in _WITHOUT_VALUES:
        if requirement.values:
            problems.append(
                Issue(f"{where}.values", f"must be empty for operator {operator}", _REASON)
            )
        text = f"{requirement.key} {operator}"
    else:
        problems.append(
            Issue(
                f"{where}.operator",
                f"{operator!r} is not one of {', '.join(Operator)}",
                _REASON,
            )
        )
        return None
    return _Requirement(requirement.key, operator, frozenset(requirement.values), text)


def compile_label_selector(
    selector: LabelSelector | None, path: str = "spec.clusterSelector"
) -> CompiledLabelSelector:
    """Validate a selector; InvalidInputError listing every problem (reason
    InvalidClusterSelector)."""
    if selector is None:
        return MATCH_ALL
    problems: list[Issue] = []
    requirements: list[_Requirement] = []
    for key, value in selector.match_labels:
        where = f"{path}.matchLabels.{key}"
        _check_key(key, where, problems)
        _check_value(value, where, problems)
        requirements.append(_Requirement(key, Operator.IN, frozenset((value,)), f"{key}={value}"))
    for i, requirement in enumerate(selector.match_expressions):
        compiled = _expression(requirement, f"{path}.matchExpressions[{i}]", problems)
        if compiled is not None:
            requirements.append(compiled)
    if problems:
        raise InvalidInputError(problems)
    return CompiledLabelSelector(tuple(requirements))
