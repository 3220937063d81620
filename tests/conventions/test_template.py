"""The strict template renderer: five variables, nothing executed."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.conventions.template import (
    VARIABLES,
    TemplateContext,
    TemplateError,
    context_values,
    parse_template,
)

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
