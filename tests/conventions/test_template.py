"""The strict template renderer: five variables, nothing executed."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.conventions.template import (
    VARIABLES,
    TemplateContext,
    TemplateError,
    context_values,
    never_valid,
    parse_template,
)
from modelplane.core.labels import value_error

from .support import read_scheduling

KUEUE = read_scheduling({"provider": "Kueue"})[0].scheduler

CONTEXT = TemplateContext(
    namespace="ml-team", name="kimi", replica="kimi-0", cluster="prod-east", priority="batch"
)
VALUES = context_values(CONTEXT, "batch")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{{ .Namespace }}", "ml-team"),
        ("{{ .Name }}", "kimi"),
        ("{{ .Replica }}", "kimi-0"),
        ("{{ .Cluster }}", "prod-east"),
        ("{{ .Priority }}", "batch"),
        ("{{.Namespace}}", "ml-team"),
        ("{{   .Name\t}}", "kimi"),
        ("team-{{ .Namespace }}-{{ .Cluster }}", "team-ml-team-prod-east"),
        ("plain", "plain"),
        ("", ""),
        ("a }} b", "a }} b"),
        ("{{ .Name }}{{ .Name }}", "kimikimi"),
    ],
)
def test_renders_each_variable(source: str, expected: str) -> None:
    assert parse_template(source).render(VALUES) == expected


def test_absent_priority_renders_empty() -> None:
    values = context_values(CONTEXT, None)
    assert parse_template("p-{{ .Priority }}").render(values) == "p-"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("{{ .Namespaces }}", "unknown variable .Namespaces"),
        ("{{ .namespace }}", "unknown variable .namespace"),
        ("{{ .Env.HOME }}", "not allowed"),
        ("{{ .Name | upper }}", "not allowed"),
        ('{{ printf "%s" .Name }}', "not allowed"),
        ("{{ if .Name }}x{{ end }}", "not allowed"),
        ("{{- .Name -}}", "not allowed"),
        ("{{/* comment */}}", "not allowed"),
        ("{{ Name }}", "not allowed"),
        ("{{ . }}", "not allowed"),
        ("{{}}", "not allowed"),
        ("{{ .Name }", "unclosed"),
        ("x {{ .Name", "unclosed"),
    ],
)
def test_rejects_anything_but_the_five_variables(source: str, fragment: str) -> None:
    with pytest.raises(TemplateError, match=fragment.replace(".", r"\.").replace("|", r"\|")):
        parse_template(source)


def test_constant_detection() -> None:
    assert parse_template("gpu-queue").is_constant
    assert not parse_template("{{ .Cluster }}").is_constant


_text = st.text(alphabet=st.characters(blacklist_characters="{"), max_size=20)


@given(st.lists(st.one_of(_text, st.sampled_from(VARIABLES)), max_size=8))
def test_any_mix_of_text_and_variables_renders_without_braces(pieces: list[str]) -> None:
    source = "".join(f"{{{{ .{p} }}}}" if p in VARIABLES else p for p in pieces)
    expected = "".join(VALUES[p] if p in VARIABLES else p for p in pieces)
    assert parse_template(source).render(VALUES) == expected


# Names as the variables take them: DNS subdomains (a priority may be absent).
_NAME = st.from_regex(r"\A[a-z0-9]([a-z0-9.-]{0,20}[a-z0-9])?\Z")
_LITERAL = st.text(alphabet="abz09-._ñA /", max_size=6)


def _check_label_value(value: str) -> str | None:
    return value_error(value)


@st.composite
def _templates(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(st.one_of(_LITERAL, st.sampled_from(VARIABLES).map(lambda v: f"{{{{ .{v} }}}}")))
    )
    return "".join(parts)


@given(
    source=_templates(),
    values=st.fixed_dictionaries(
        {v: (_NAME if v != "Priority" else st.one_of(st.just(""), _NAME)) for v in VARIABLES}
    ),
)
def test_a_template_refused_for_every_rendering_renders_nothing_valid(
    source: str, values: dict[str, str]
) -> None:
    """never_valid is sound: when it refuses a template, any values render it refused."""
    template = parse_template(source)
    if never_valid(template, _check_label_value) is not None:
        assert _check_label_value(template.render(values)) is not None
    if never_valid(template, is_refused_queue) is not None:
        assert is_refused_queue(template.render(values)) is not None


def is_refused_queue(value: str) -> str | None:
    # The strictest queue check: KAI's and Kueue's (a label value and a DNS subdomain).
    return KUEUE.queue_error(value)


@pytest.mark.parametrize(
    ("source", "refused"),
    [
        ("ñ{{ .Cluster }}", True),
        ("{{ .Cluster }}-", True),
        ("-{{ .Namespace }}", True),
        ("a..{{ .Name }}", True),
        ("q" * 70 + "{{ .Name }}", True),
        ("{{ .Cluster }}", False),
        ("team-{{ .Namespace }}", False),
        ("x-{{ .Priority }}", False),
        ("{{ .Priority }}", False),
    ],
)
def test_queue_templates_refused_by_what_they_render(source: str, refused: bool) -> None:
    assert (never_valid(parse_template(source), is_refused_queue) is not None) is refused
