"""A strict renderer for the five template variables of a scheduling block.

The platform writes values such as `"{{ .Namespace }}-gpu"`. They look like Go
templates, and read the same way, but only a bare variable reference is an
action here: no pipelines, functions, conditionals, comments or trim markers.
Anything else is rejected at parse time, so a template is data that is never
executed.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

VARIABLES: Final = ("Namespace", "Name", "Replica", "Cluster", "Priority")
_OPEN: Final = "{{"
_CLOSE: Final = "}}"
_ACTION = re.compile(r"^\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*$")
_ALLOWED_TEXT: Final = ", ".join(f"{{{{ .{v} }}}}" for v in VARIABLES)


@dataclass(frozen=True)
class TemplateContext:
    """The values a template may refer to, for one ModelReplica on one cluster.

    `priority` is what the replica asked for (it may be None); the conventions
    resolve it against the cluster's default before rendering `{{ .Priority }}`.
    """

    namespace: str
    name: str
    replica: str
    cluster: str
    priority: str | None


@dataclass(frozen=True)
class Variable:
    name: str


@dataclass(frozen=True)
class Template:
    """A parsed template: literal text interleaved with variable references."""

    source: str
    parts: tuple[str | Variable, ...]

    @property
    def is_constant(self) -> bool:
        return all(isinstance(p, str) for p in self.parts)

    def render(self, values: "dict[str, str]") -> str:
        return "".join(p if isinstance(p, str) else values[p.name] for p in self.parts)


class TemplateError(ValueError):
    """Why a template string is not one this renderer accepts."""


def parse_template(source: str) -> Template:
    """Parse `source`, raising TemplateError for anything but the five variables."""
    parts: list[str | Variable] = []
    rest = source
    while True:
        start = rest.find(_OPEN)
        if start < 0:
            if rest:
                parts.append(rest)
            break
        if start:
            parts.append(rest[:start])
        end = rest.find(_CLOSE, start + len(_OPEN))
        if end < 0:
            raise TemplateError(f"unclosed '{_OPEN}' in {source!r}")
        body = rest[start + len(_OPEN) : end]
        match = _ACTION.match(body)
        if match is None:
            raise TemplateError(f"'{_OPEN}{body}{_CLOSE}' is not allowed; only {_ALLOWED_TEXT} are")
        name = match.group(1)
        if name not in VARIABLES:
            raise TemplateError(f"unknown variable .{name}; only {_ALLOWED_TEXT} are allowed")
        parts.append(Variable(name))
        rest = rest[end + len(_CLOSE) :]
    return Template(source=source, parts=tuple(parts))


def context_values(context: TemplateContext, resolved_priority: str | None) -> dict[str, str]:
    """The variable values for rendering; an absent priority renders empty."""
    return {
        "Namespace": context.namespace,
        "Name": context.name,
        "Replica": context.replica,
        "Cluster": context.cluster,
        "Priority": resolved_priority or "",
    }


# What each variable renders in the most permissive rendering of a template. Every
# value a variable takes is a Kubernetes name (the priority may also be absent and
# render empty), and every check a rendering meets (a DNS label or subdomain, a
# label value, a queue name) is a length limit, an alphabet and alphanumerics at
# the ends of the whole and of each dot-separated part. One lowercase alphanumeric
# is the shortest name there is and is allowed at any position under all of them,
# so a rendering with it can only be refused for the template's own text: when it
# is refused (with the priority absent and present), so is every rendering.
_SHORTEST: Final = "a"
_PERMISSIVE: Final[tuple[dict[str, str], ...]] = (
    dict[str, str].fromkeys(VARIABLES, _SHORTEST),
    {**dict[str, str].fromkeys(VARIABLES, _SHORTEST), "Priority": ""},
)


def never_valid(template: Template, problem: Callable[[str], str | None]) -> str | None:
    """Why no rendering of `template` passes `problem` (a check returning what is
    wrong with a rendered value, or None), or None when some rendering does.

    A constant template is its only rendering. A refusal names the text at fault:
    a template like `"ñ{{ .Cluster }}"` is wrong whichever cluster renders it.
    """
    found: str | None = None
    for values in _PERMISSIVE:
        rendered = template.render(values)
        found = problem(rendered)
        if found is None:
            return None
        if template.is_constant:
            break
    if template.is_constant:
        return found
    return f"every rendering of {template.source!r} is refused, for example {found}"
