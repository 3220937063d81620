"""`naming.fitted`: a name kept when it fits, cut with a digest of the whole when not."""

from hypothesis import given
from hypothesis import strategies as st

from modelplane.core.naming import HELM_RELEASE_MAX, fitted, is_dns_label

labels = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,120}[a-z0-9])?", fullmatch=True)


@given(labels, st.integers(min_value=12, max_value=253))
def test_a_fitted_name_fits_and_is_kept_when_it_already_did(name: str, limit: int) -> None:
    out = fitted(name, limit)
    assert len(out) <= limit
    assert out == fitted(name, limit)  # deterministic
    assert (out == name) is (len(name) <= limit)
    if len(out) <= 63:
        assert is_dns_label(out)


@given(labels, st.text("ab", min_size=1, max_size=5), st.text("cd", min_size=1, max_size=5))
def test_names_that_differ_only_past_the_cut_stay_apart(head: str, one: str, two: str) -> None:
    long = head + "-" + "x" * 60
    assert fitted(long + one, HELM_RELEASE_MAX) != fitted(long + two, HELM_RELEASE_MAX)


def test_a_63_character_cluster_gets_a_helm_release_name() -> None:
    cluster = "c" * 63
    name = fitted(f"{cluster}-node-feature-discovery", HELM_RELEASE_MAX)
    assert len(name) == HELM_RELEASE_MAX
    assert name.startswith("c" * 42 + "-")
