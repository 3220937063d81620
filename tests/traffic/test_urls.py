"""Endpoint URLs: what a gateway can send to, named by field when it cannot."""

import pytest

from modelplane.core.issues import InvalidInputError
from modelplane.traffic.names import entry_gateway_name, object_name
from modelplane.traffic.urls import URL, external_url, host_of, parse_url


@pytest.mark.parametrize(
    ("text", "url", "shown"),
    [
        ("http://gw.example/mp-ml/r", URL("http", "gw.example", 80, "/mp-ml/r"), None),
        (
            "https://API.example.com/v1",
            URL("https", "api.example.com", 443, "/v1"),
            "https://api.example.com/v1",
        ),
        ("http://10.0.0.7:8080", URL("http", "10.0.0.7", 8080), None),
        ("http://[2001:db8::1]/x", URL("http", "2001:db8::1", 80, "/x"), None),
    ],
)
def test_urls_read_and_print_back(text: str, url: URL, shown: str | None) -> None:
    assert parse_url(text, "spec.url") == url
    assert str(url) == (shown or text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("ftp://x.example", "must start with http:// or https://"),
        ("http://u:p@x.example", "must not carry credentials"),
        ("http://x.example/?a=1", "must not have a query or fragment"),
        ("http://x.example:99999", "is not a URL"),
        ("http://:80/", "has no host"),
        ("http://bad_host.example", "has an invalid host"),
    ],
)
def test_bad_urls_are_named(text: str, why: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        parse_url(text, "spec.endpoints[2].external.url")
    (issue,) = caught.value.issues
    assert (issue.path, issue.reason) == ("spec.endpoints[2].external.url", "InvalidURL")
    assert why in issue.message


@pytest.mark.parametrize("path", ["", "/", "/v1", "/v1/"])
def test_an_external_url_is_an_openai_base_url(path: str) -> None:
    assert external_url(f"https://api.example.com{path}", "p").path == path


def test_an_external_url_with_another_path_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="ending at the host or at /v1"):
        external_url("https://api.example.com/openai/v1", "p")


@pytest.mark.parametrize(
    "readable", ["chat", "7b-chat", "a.b.c", "x" * 70, "modelplane-entry-" + "y" * 60]
)
def test_names_are_service_names_and_stable(readable: str) -> None:
    name = object_name(readable, "ns", readable)
    assert len(name) <= 63 and name[0].isalpha() and "." not in name
    assert object_name(readable, "ns", readable) == name
    if name != readable:
        # Hashed: the digest is of the identity, so another identity is another name.
        assert object_name(readable, "other", readable) != name


def test_an_entry_gateway_is_never_the_cluster_gateway() -> None:
    assert entry_gateway_name("fleet") == "modelplane-entry-fleet"
    assert entry_gateway_name("replicas") != "modelplane-replicas"


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("http://Entry.Example.", "entry.example"),
        ("https://203.0.113.9:8443/v1", "203.0.113.9"),
        ("http://[2001:db8::1]", "2001:db8::1"),
        # What urllib refuses to split is read as written, never raised.
        ("http://[foo:bar]/x", "foo:bar"),
        ("http://user@a[b", "a[b"),
        ("", ""),
    ],
)
def test_the_host_of_any_text_is_read_without_raising(text: str, host: str) -> None:
    assert host_of(text) == host


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # Another team's endpoint picker, the API server: names a cluster's DNS answers.
        ("http://qwen-epp.mp-chat-team.svc.cluster.local:9002", "in-cluster name"),
        ("https://kubernetes.default.svc", "in-cluster name"),
        ("https://kubernetes.default.svc.corp.example", "in-cluster name"),
        ("http://10-1-2-3.team-b.pod.cluster.local", "in-cluster name"),
        ("http://models.cluster.local", "in-cluster name"),
        ("http://kubernetes", "single-label name"),
        # A node's metadata service, loopback, pods' and Services' private ranges.
        ("http://169.254.169.254", "not a public IP address"),
        ("http://127.0.0.1:19000", "not a public IP address"),
        ("http://10.96.0.1", "not a public IP address"),
        ("http://[::1]/v1", "not a public IP address"),
        ("http://[fd00::5]", "not a public IP address"),
        ("http://0.0.0.0", "not a public IP address"),
        ("http://100.64.0.10", "not a public IP address"),
        # IPv6 addresses that carry a private IPv4 address to a translator or tunnel.
        ("http://[::ffff:10.0.0.1]", "not a public IP address"),
        ("http://[64:ff9b::a9fe:a9fe]", "not a public IP address"),
        ("http://[2002:a00:1::1]", "not a public IP address"),
        ("http://[::a00:1]", "not a public IP address"),
        ("http://[64:ff9b:1::808:808]", "not a public IP address"),
        ("http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]", "not a public IP address"),
    ],
)
def test_an_external_url_into_a_cluster_is_refused(text: str, why: str) -> None:
    with pytest.raises(InvalidInputError, match=why) as raised:
        external_url(text, "spec.endpoints[1].external.url")
    assert raised.value.issues[0].path == "spec.endpoints[1].external.url"


@pytest.mark.parametrize(
    "text",
    [
        "https://api.example-saas.com/v1",
        "http://8.8.8.8:8080",
        "https://svc.example.com",
        "http://[2606:4700:4700::1111]",
        # A translator's or tunnel's address for a public IPv4 host is public.
        "http://[64:ff9b::808:808]",
        "http://[2002:808:808::1]",
    ],
)
def test_an_external_url_outside_every_cluster_is_taken(text: str) -> None:
    assert external_url(text, "p").host == parse_url(text, "p").host
