"""The string formats the API server enforces, and the ones it ignores."""

from __future__ import annotations

import pytest

from modelplane_cli.schema.formats import conforms, is_checked

CASES: list[tuple[str, str, bool]] = [
    ("date-time", "2026-11-22T04:52:00Z", True),
    ("date-time", "2026-11-22T04:52:00.123+01:00", True),
    ("date-time", "2026-11-22t04:52:00z", True),
    ("date-time", "2026-11-22 04:52:00Z", False),
    ("date-time", "2026-11-22T25:00:00Z", False),
    ("date-time", "2026-02-30T00:00:00Z", False),
    ("datetime", "2026-11-22T04:52:00Z", True),
    ("date", "2024-02-29", True),
    ("date", "2023-02-29", False),
    ("duration", "1h30m", True),
    ("duration", "1.5s", True),
    ("duration", "3 days", True),
    ("duration", "soon", False),
    ("byte", "aGVsbG8=", True),
    ("byte", "not base64!", False),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", True),
    ("uuid", "123e4567", False),
    ("uuid4", "123e4567-e89b-42d3-a456-426614174000", True),
    ("uuid4", "123e4567-e89b-12d3-a456-426614174000", False),
    ("ipv4", "10.0.0.1", True),
    ("ipv4", "10.0.0.256", False),
    ("ipv6", "fe80::1", True),
    ("ipv6", "10.0.0.1", False),
    ("cidr", "10.0.0.0/8", True),
    ("cidr", "10.0.0.0", False),
    ("cidr", "fd00::/8", True),
    ("cidr", "10.0.0.0/255.0.0.0", False),
    ("cidr", "fe80::%eth0/64", False),
    ("cidr", "10.0.0.0/8\n", False),
    ("mac", "00:1a:2b:3c:4d:5e", True),
    ("mac", "00:1a:2b", False),
    ("hostname", "api.example.com", True),
    ("hostname", "-bad.example.com", False),
    ("uri", "https://example.com/a?b=c", True),
    ("uri", "/relative/path", True),
    ("uri", "no scheme", False),
    ("email", "ops@example.com", True),
    ("email", "ops", False),
    ("hexcolor", "#ff00AA", True),
    ("hexcolor", "#ff00A", False),
    ("rgbcolor", "rgb(255, 0, 10)", True),
    ("rgbcolor", "rgb(256, 0, 10)", False),
    ("isbn10", "0-321-75104-3", True),
    ("isbn13", "978-0321751041", True),
    ("isbn13", "978-0321751042", False),
    ("creditcard", "4111 1111 1111 1111", True),
    ("creditcard", "4111 1111 1111 1112", False),
    ("ssn", "123-45-6789", True),
    ("bsonobjectid", "507f1f77bcf86cd799439011", True),
    ("password", "anything at all", True),
    ("k8s-short-name", "my-name", True),
    ("k8s-short-name", "My.Name", False),
    ("k8s-long-name", "my.name", True),
]


@pytest.mark.parametrize(("name", "value", "ok"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_format(name: str, value: str, ok: bool) -> None:
    assert is_checked(name)
    assert conforms(name, value) is ok


@pytest.mark.parametrize("name", ["int32", "int64", "float", "double", "quantity", "made-up"])
def test_unchecked_formats_accept_anything(name: str) -> None:
    assert not is_checked(name)
    assert conforms(name, "definitely not valid")
