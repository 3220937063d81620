"""Tenant namespaces follow the cluster's template: readable, unique, never forgeable."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from modelplane_models.inference_cluster import Tenancy as TenancyModel

from modelplane.conventions.tenancy import DEFAULT_TENANCY, Tenancy, read_tenancy
from modelplane.core.issues import InvalidInputError
from modelplane.core.naming import is_dns_label
from modelplane.core.vocabulary import Reason

DNS_LABEL = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True)
CLUSTER = "prod-us-east"


def tenancy(namespace: str, **fields: dict[str, str]) -> Tenancy:
    found, issues = read_tenancy(TenancyModel(namespace=namespace, **fields), CLUSTER)
    assert issues == []
    return found


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [
        ("ml-team-prod", "mp-ml-team-prod"),
        ("a" * 60, "mp-" + "a" * 60),
    ],
)
def test_the_default_reads_plainly(namespace: str, expected: str) -> None:
    assert DEFAULT_TENANCY.namespace_for(namespace, CLUSTER) == expected


def test_long_namespaces_are_hashed_apart() -> None:
    first, second = "a" * 61, "a" * 62
    names = [DEFAULT_TENANCY.namespace_for(n, CLUSTER) for n in (first, second)]
    assert names[0] != names[1]
    for name in names:
        assert is_dns_label(name)
        assert name.startswith("mp--a")


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{ .Namespace }}", "ml-team-prod"),
        ("tenant-{{ .Namespace }}", "tenant-ml-team-prod"),
        ("{{ .Cluster }}-{{ .Namespace }}", "prod-us-east-ml-team-prod"),
        ("{{ .Namespace }}-models", "ml-team-prod-models"),
        ("{{.Namespace}}", "ml-team-prod"),
    ],
)
def test_a_template_places_namespaces_where_it_says(template: str, expected: str) -> None:
    assert tenancy(template).namespace_for("ml-team-prod", CLUSTER) == expected


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("models", "must contain {{ .Namespace }}"),
        ("{{ .Name }}-{{ .Namespace }}", "{{ .Name }} differs between replicas"),
        ("{{ .Replica }}", "{{ .Replica }} differs between replicas"),
        ("{{ .Namespace | lower }}", "is not allowed"),
        ("{{ .Nmespace }}", "unknown variable .Nmespace"),
        ("Team-{{ .Namespace }}", "renders 'Team-default'"),
        ("team_{{ .Namespace }}", "renders 'team_default'"),
        ("{{ .Namespace }}-" + "x" * 60, "renders 'default-xxx"),
        ("p" * 60 + "-{{ .Namespace }}", "leaves no room"),
    ],
)
def test_a_template_that_cannot_name_a_namespace_is_named(template: str, problem: str) -> None:
    found, issues = read_tenancy(TenancyModel(namespace=template), CLUSTER)
    assert [i.path for i in issues] == ["spec.tenancy.namespace"], issues
    assert issues[0].reason == Reason.INVALID_TENANCY
    assert problem in issues[0].message
    # The default stands in; the caller holds what depends on the template.
    assert found.namespace == DEFAULT_TENANCY.namespace


def test_a_namespace_too_long_without_a_prefix_is_an_error_not_a_collision() -> None:
    suffixed = tenancy("{{ .Namespace }}-models")
    with pytest.raises(InvalidInputError) as caught:
        suffixed.namespace_for("n" * 60, CLUSTER)
    assert caught.value.issues[0].path == "spec.tenancy.namespace"


@given(DNS_LABEL, st.sampled_from(["mp-{{ .Namespace }}", "{{ .Cluster }}-{{ .Namespace }}"]))
def test_every_namespace_gets_a_dns_label(namespace: str, template: str) -> None:
    name = tenancy(template).namespace_for(namespace, CLUSTER)
    assert is_dns_label(name)
    assert tenancy(template).namespace_for(namespace, CLUSTER) == name


@given(DNS_LABEL, DNS_LABEL, st.sampled_from(["mp-{{ .Namespace }}", "t-{{ .Namespace }}-x"]))
def test_no_namespace_can_land_in_anothers(a: str, b: str, template: str) -> None:
    placed = tenancy(template)
    try:
        first, second = placed.namespace_for(a, CLUSTER), placed.namespace_for(b, CLUSTER)
    except InvalidInputError:
        return
    assert (first == second) == (a == b)


def test_a_forged_namespace_cannot_reach_a_hashed_one() -> None:
    """The readable form of any namespace never looks like a hashed form."""
    victim = DEFAULT_TENANCY.namespace_for("v" * 63, CLUSTER)
    forged = victim.removeprefix("mp-")  # what an attacker would name theirs
    assert not is_dns_label(forged) or DEFAULT_TENANCY.namespace_for(forged, CLUSTER) != victim


def test_labels_and_annotations_render_per_namespace() -> None:
    found = tenancy(
        "mp-{{ .Namespace }}",
        labels={"pod-security.kubernetes.io/enforce": "restricted", "team": "{{ .Namespace }}"},
        annotations={"example.com/cost-centre": "{{ .Cluster }}/{{ .Namespace }}"},
    )
    assert found.namespace_labels("team-a", CLUSTER) == {
        "pod-security.kubernetes.io/enforce": "restricted",
        "team": "team-a",
    }
    assert found.namespace_annotations("team-a", CLUSTER) == {
        "example.com/cost-centre": "prod-us-east/team-a"
    }


def test_a_label_that_renders_invalid_names_its_key() -> None:
    found = tenancy("mp-{{ .Namespace }}", labels={"team": "{{ .Namespace }}-" + "x" * 60})
    with pytest.raises(InvalidInputError) as caught:
        found.namespace_labels("team-a", CLUSTER)
    assert [i.path for i in caught.value.issues] == ["spec.tenancy.labels[team]"]


@pytest.mark.parametrize(
    ("field", "key", "problem"),
    [
        ("labels", "modelplane.ai/namespace", "set by Modelplane"),
        ("labels", "app.kubernetes.io/managed-by", "set by Modelplane"),
        ("annotations", "bad key/x/y", "invalid key"),
        ("labels", "team", "only {{ .Namespace }} and {{ .Cluster }}"),
    ],
)
def test_platform_keys_are_checked(field: str, key: str, problem: str) -> None:
    value = "{{ .Priority }}" if problem.startswith("only") else "x"
    model = TenancyModel.model_validate({field: {key: value}})
    _, issues = read_tenancy(model, CLUSTER)
    assert [i.path for i in issues] == [f"spec.tenancy.{field}[{key}]"]
    assert problem in issues[0].message


ENFORCE = "pod-security.kubernetes.io/enforce"


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        # No tenancy labels, or labels that leave the key alone: baseline, so a team's
        # pod cannot take the host of a GPU node other teams' pods share.
        ({}, {ENFORCE: "baseline"}),
        ({"team": "{{ .Namespace }}"}, {ENFORCE: "baseline", "team": "team-a"}),
        # The platform's own level wins, looser or stricter.
        ({ENFORCE: "privileged"}, {ENFORCE: "privileged"}),
        ({ENFORCE: "restricted"}, {ENFORCE: "restricted"}),
    ],
)
def test_tenant_namespaces_enforce_baseline_unless_the_platform_says(
    labels: dict[str, str], expected: dict[str, str]
) -> None:
    found = tenancy("mp-{{ .Namespace }}", labels=labels)
    assert found.namespace_labels("team-a", CLUSTER) == expected


def test_the_default_tenancy_enforces_baseline() -> None:
    assert DEFAULT_TENANCY.namespace_labels("team-a", CLUSTER) == {ENFORCE: "baseline"}


@pytest.mark.parametrize("key", [ENFORCE, "pod-security.kubernetes.io/warn"])
def test_a_pod_security_label_that_is_no_level_is_refused(key: str) -> None:
    # The API server refuses to create a namespace whose Pod Security label names no
    # level: said on the cluster, naming the key, not left to the workload cluster.
    _, issues = read_tenancy(TenancyModel.model_validate({"labels": {key: "Baseline"}}), CLUSTER)
    assert [i.path for i in issues] == [f"spec.tenancy.labels[{key}]"]
    assert "not a Pod Security level" in issues[0].message


@pytest.mark.parametrize("key", [ENFORCE, f"{ENFORCE}-version"])
def test_a_pod_security_level_is_never_a_template(key: str) -> None:
    # Otherwise a control-plane namespace named `privileged` would choose its level.
    model = TenancyModel.model_validate({"labels": {key: "{{ .Namespace }}"}})
    _, issues = read_tenancy(model, CLUSTER)
    assert [i.path for i in issues] == [f"spec.tenancy.labels[{key}]"]
    assert "not a template" in issues[0].message


@pytest.mark.parametrize(
    ("value", "refused"),
    [("latest", False), ("v1.34", False), ("v1.x-bogus", True), ("1.34", True), ("v2.0", True)],
)
def test_a_pod_security_version_is_latest_or_a_minor_of_v1(value: str, refused: bool) -> None:
    # The API server refuses a namespace whose version label it cannot parse, too.
    key = "pod-security.kubernetes.io/warn-version"
    _, issues = read_tenancy(TenancyModel.model_validate({"labels": {key: value}}), CLUSTER)
    assert [i.path for i in issues] == ([f"spec.tenancy.labels[{key}]"] if refused else [])
