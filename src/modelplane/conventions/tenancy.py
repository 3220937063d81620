"""Where a team's replicas land on a workload cluster, and what the platform sets there.

`InferenceCluster.spec.tenancy` is the platform's: `namespace` is a template
naming the workload-cluster namespace of a control-plane namespace's replicas
(default `mp-{{ .Namespace }}`), `labels` and `annotations` are set on every
tenant namespace (Pod Security, Kueue namespace selectors, a cost centre). The
templates go through the conventions' strict renderer, restricted to the two
variables that are the same for every replica of a namespace on one cluster:
`{{ .Namespace }}` and `{{ .Cluster }}`.

The namespace template must contain `{{ .Namespace }}`, so two control-plane
namespaces never share a tenant namespace. A rendering too long for a DNS label
is shortened to `<prefix>-<head>-<digest>`, where `<prefix>` is what the
template renders before the first `{{ .Namespace }}`: a namespace never starts
with '-', so no readable rendering can equal a shortened one, and no tenant can
choose a namespace name that lands in another's. A template with no literal
prefix has no such form; a namespace whose rendering is too long is then an
error naming the field.

Every tenant namespace enforces Pod Security `baseline` unless the platform's
`labels` name `pod-security.kubernetes.io/enforce` themselves (`privileged` to
allow host access, `restricted` for more): the replicas of several teams share
GPU nodes, and a pod with host access would reach every team's weights and
devices there. The teams cannot write the tenancy block, so they cannot lower it.
A Pod Security label whose value is no level is refused here, since the API
server would refuse to create the namespace.
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from modelplane_models.inference_cluster import Tenancy as TenancyModel

from modelplane.conventions.template import (
    Template,
    TemplateError,
    Variable,
    never_valid,
    parse_template,
)
from modelplane.core import naming
from modelplane.core.issues import InvalidInputError, Issue
from modelplane.core.labels import key_error, value_error
from modelplane.core.pod_security import LEVELS
from modelplane.core.vocabulary import (
    GROUP,
    LABEL_MANAGED_BY,
    LABEL_POD_SECURITY_AUDIT,
    LABEL_POD_SECURITY_ENFORCE,
    LABEL_POD_SECURITY_WARN,
    POD_SECURITY_DEFAULT_LEVEL,
    Reason,
)

ROOT: Final = "spec.tenancy"
# What a tenant namespace enforces unless the platform's tenancy or the cluster's
# backend says otherwise: Pod Security baseline (no host namespaces, privileged
# containers, hostPath volumes or added capabilities beyond the default set).
DEFAULT_POD_SECURITY: Final[Mapping[str, str]] = {
    LABEL_POD_SECURITY_ENFORCE: POD_SECURITY_DEFAULT_LEVEL
}
DEFAULT_NAMESPACE_TEMPLATE: Final = "mp-{{ .Namespace }}"
VARIABLES: Final = ("Namespace", "Cluster")
_DIGEST_LEN: Final = 16
_RESERVED_PREFIX: Final = f"{GROUP}/"
# A DNS label of any length: what a rendering too long to use as it is must be.
_LABEL_SHAPED: Final = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
# The labels Pod Security admission reads a level from. It refuses to create a
# namespace whose label names no level (pod-security-admission, `ValidateNamespace`:
# "require valid labels on create"), which would leave every replica without one.
_POD_SECURITY_MODES: Final = frozenset(
    {LABEL_POD_SECURITY_ENFORCE, LABEL_POD_SECURITY_AUDIT, LABEL_POD_SECURITY_WARN}
)
# And the version of each mode's level, which it refuses the same way unless it is
# `latest` or `v1.<minor>` (pod-security-admission `api.ParseVersion`).
_POD_SECURITY_VERSIONS: Final = frozenset(f"{mode}-version" for mode in _POD_SECURITY_MODES)
_POD_SECURITY_VERSION: Final = re.compile(r"^(latest|v1\.(0|[1-9][0-9]*))$")


def enforced_level(tenancy: TenancyModel | None) -> str:
    """The Pod Security level a team's template must meet on the cluster: the one the
    platform's `labels` enforce, else `baseline`, which tenant namespaces enforce on
    Native clusters and Modelplane checks alone on KServe ones (whose namespaces only
    warn: `workloads.kserve`). A label naming no level is refused with the tenancy
    (`_label_problem`) and read as the default."""
    value = ((tenancy.labels if tenancy else None) or {}).get(LABEL_POD_SECURITY_ENFORCE)
    return value if value in LEVELS else POD_SECURITY_DEFAULT_LEVEL


def _label_problem(key: str, value: str) -> str | None:
    """What is wrong with `value` as the rendered value of label `key`, or None."""
    problem = value_error(value)
    if problem is None and key in _POD_SECURITY_MODES and value not in LEVELS:
        problem = "is not a Pod Security level (privileged, baseline or restricted)"
    if problem is None and key in _POD_SECURITY_VERSIONS and not _POD_SECURITY_VERSION.match(value):
        problem = "is not a Pod Security version (latest, or v1.<minor>)"
    return problem


def _issue(path: str, message: str) -> Issue:
    return Issue(path, message, Reason.INVALID_TENANCY)


def _parse(source: str, path: str, issues: list[Issue]) -> Template | None:
    try:
        template = parse_template(source)
    except TemplateError as error:
        issues.append(_issue(path, str(error)))
        return None
    others = sorted({p.name for p in template.parts if isinstance(p, Variable)} - set(VARIABLES))
    if others:
        issues.append(
            _issue(
                path,
                f"{{{{ .{others[0]} }}}} differs between replicas of one namespace; only "
                "{{ .Namespace }} and {{ .Cluster }} are allowed here",
            )
        )
        return None
    return template


def _values(namespace: str, cluster: str) -> dict[str, str]:
    return {"Namespace": namespace, "Cluster": cluster}


@dataclass(frozen=True)
class Tenancy:
    """A cluster's validated tenancy block."""

    namespace: Template
    labels: tuple[tuple[str, Template], ...] = ()
    annotations: tuple[tuple[str, Template], ...] = ()

    def namespace_for(self, namespace: str, cluster: str) -> str:
        """The tenant namespace of control-plane `namespace` on `cluster`.

        Raises InvalidInputError naming `spec.tenancy.namespace` when the
        rendering is not a DNS label and cannot be shortened into one.
        """
        rendered = self.namespace.render(_values(namespace, cluster))
        if naming.is_dns_label(rendered):
            return rendered
        path = f"{ROOT}.namespace"
        prefix = self._prefix(cluster)
        if not _LABEL_SHAPED.match(rendered) or not prefix:
            raise InvalidInputError(
                [
                    _issue(
                        path,
                        f"renders {rendered!r} for namespace {namespace!r}, which is not a "
                        "DNS label (at most 63 lowercase alphanumerics or '-')",
                    )
                ]
            )
        digest = naming.digest(namespace, length=_DIGEST_LEN)
        room = naming.DNS_LABEL_MAX - len(prefix) - 1 - len(digest) - 1
        head = namespace[:room].rstrip("-.").replace(".", "-")
        if room < 1 or not head:
            raise InvalidInputError(
                [_issue(path, f"its prefix {prefix!r} leaves no room for the namespace's name")]
            )
        return f"{prefix}-{head}-{digest}"

    def _prefix(self, cluster: str) -> str:
        """What the template renders before its first `{{ .Namespace }}`."""
        out: list[str] = []
        for part in self.namespace.parts:
            if isinstance(part, Variable) and part.name == "Namespace":
                break
            out.append(part if isinstance(part, str) else cluster)
        return "".join(out)

    def namespace_labels(
        self,
        namespace: str,
        cluster: str,
        pod_security: Mapping[str, str] = DEFAULT_POD_SECURITY,
    ) -> dict[str, str]:
        """The platform's labels for the tenant namespace of `namespace`, rendered,
        over the default Pod Security labels (`pod_security`, the backend's: a platform
        label of the same key replaces one).

        Raises InvalidInputError naming each label whose value renders invalid.
        """
        issues: list[Issue] = []
        out: dict[str, str] = dict(pod_security)
        for key, template in self.labels:
            value = template.render(_values(namespace, cluster))
            problem = _label_problem(key, value)
            if problem:
                issues.append(
                    _issue(f"{ROOT}.labels[{key}]", f"renders {value!r}, which {problem}")
                )
            out[key] = value
        if issues:
            raise InvalidInputError(issues)
        return out

    def namespace_annotations(self, namespace: str, cluster: str) -> dict[str, str]:
        """The platform's annotations for the tenant namespace of `namespace`, rendered."""
        return {key: t.render(_values(namespace, cluster)) for key, t in self.annotations}


DEFAULT_TENANCY: Final = Tenancy(parse_template(DEFAULT_NAMESPACE_TEMPLATE))


def _label_value_error(key: str) -> Callable[[str], str | None]:
    def problem_of(value: str) -> str | None:
        problem = _label_problem(key, value)
        return None if problem is None else f"renders {value!r}, which {problem}"

    return problem_of


def _keyed(
    values: Mapping[str, str] | None, field: str, issues: list[Issue]
) -> tuple[tuple[str, Template], ...]:
    out: list[tuple[str, Template]] = []
    for key in sorted(values or {}):
        path = f"{ROOT}.{field}[{key}]"
        problem = key_error(key)
        if problem:
            issues.append(_issue(path, f"invalid key: {problem}"))
            continue
        if key.startswith(_RESERVED_PREFIX) or key == LABEL_MANAGED_BY:
            issues.append(_issue(path, f"{key} is set by Modelplane on every tenant namespace"))
            continue
        template = _parse((values or {})[key], path, issues)
        if template is None:
            continue
        if (
            field == "labels"
            and key in _POD_SECURITY_MODES | _POD_SECURITY_VERSIONS
            and not template.is_constant
        ):
            # A level per namespace would let a namespace's name choose its own level.
            issues.append(_issue(path, "a Pod Security label is written as it is, not a template"))
            continue
        if field == "labels" and (problem := never_valid(template, _label_value_error(key))):
            issues.append(_issue(path, problem))
            continue
        out.append((key, template))
    return tuple(out)


def read_tenancy(model: TenancyModel | None, cluster: str) -> tuple[Tenancy, list[Issue]]:
    """The cluster's tenancy block, validated; with errors the default's namespace
    template stands in, and the caller holds what depends on it.

    Checks what the schema cannot: the templates, the reserved keys, and that the
    namespace template renders a DNS label for this cluster.
    """
    issues: list[Issue] = []
    source = (model.namespace if model else None) or DEFAULT_NAMESPACE_TEMPLATE
    path = f"{ROOT}.namespace"
    template = _parse(source, path, issues)
    if template is not None and not any(
        isinstance(p, Variable) and p.name == "Namespace" for p in template.parts
    ):
        issues.append(_issue(path, "must contain {{ .Namespace }}: each namespace needs its own"))
        template = None
    labels = _keyed(model.labels if model else None, "labels", issues)
    annotations = _keyed(model.annotations if model else None, "annotations", issues)
    tenancy = Tenancy(template or DEFAULT_TENANCY.namespace, labels, annotations)
    if template is not None:
        try:
            # A namespace every cluster has: a template that cannot place it
            # (upper case, an underscore, a cluster name that breaks it) is wrong
            # whatever namespaces come to use the cluster.
            tenancy.namespace_for("default", cluster)
        except InvalidInputError as invalid:
            issues.extend(invalid.issues)
            tenancy = Tenancy(DEFAULT_TENANCY.namespace, labels, annotations)
    return tenancy, issues
