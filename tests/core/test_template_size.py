"""A pod template's size bound: exact at the boundary, in bytes."""

from typing import Any

from modelplane.core.template_size import MAX_TEMPLATE_BYTES, template_bytes, template_size_issue


def padded(size: int) -> dict[str, Any]:
    """A template whose compact JSON is exactly `size` bytes."""
    empty = {"spec": {"containers": [{"name": "engine", "args": [""]}]}}
    pad = size - template_bytes(empty)
    assert pad >= 0
    return {"spec": {"containers": [{"name": "engine", "args": ["x" * pad]}]}}


def test_a_template_at_the_bound_is_allowed_and_one_byte_more_is_not() -> None:
    at = padded(MAX_TEMPLATE_BYTES)
    assert template_bytes(at) == MAX_TEMPLATE_BYTES
    assert template_size_issue(at, "spec.workers.template") is None

    over = padded(MAX_TEMPLATE_BYTES + 1)
    issue = template_size_issue(over, "spec.workers.template")
    assert issue is not None
    assert issue.path == "spec.workers.template"
    assert issue.reason == "InvalidSpec"
    assert str(issue).startswith(
        f"spec.workers.template: is {MAX_TEMPLATE_BYTES + 1} bytes as JSON, more than the "
        f"{MAX_TEMPLATE_BYTES} a pod template may have"
    )


def test_multibyte_text_counts_in_bytes() -> None:
    # Four bytes of UTF-8 per character: a quarter of the bound in characters is all of it.
    template = {"a": "\U0001f600" * (MAX_TEMPLATE_BYTES // 4)}
    assert template_size_issue(template, "t") is not None
