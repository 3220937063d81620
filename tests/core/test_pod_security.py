"""The Pod Security baseline level on a team's pod template: each rule of
k8s.io/pod-security-admission's baseline checks, naming the field it refuses."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from modelplane.core.pod_security import (
    ALLOWED_CAPABILITIES,
    ALLOWED_SYSCTLS,
    baseline_issues,
)

Obj = dict[str, Any]
PATH = "spec.workers.template"


def pod(**spec: Any) -> Obj:
    return {"spec": {"containers": [{"name": "engine", "image": "vllm"}], **spec}}


def engine(**fields: Any) -> Obj:
    return pod(containers=[{"name": "engine", "image": "vllm", **fields}])


def context(**fields: Any) -> Obj:
    return engine(securityContext=fields)


C = f"{PATH}.spec.containers[0]"
SC = f"{C}.securityContext"
POD_SC = f"{PATH}.spec.securityContext"


@pytest.mark.parametrize(
    ("template", "field", "words"),
    [
        (pod(hostNetwork=True), f"{PATH}.spec.hostNetwork", "host namespaces"),
        (pod(hostPID=True), f"{PATH}.spec.hostPID", "host namespaces"),
        (pod(hostIPC=True), f"{PATH}.spec.hostIPC", "host namespaces"),
        (
            pod(volumes=[{"name": "a", "emptyDir": {}}, {"name": "h", "hostPath": {"path": "/"}}]),
            f"{PATH}.spec.volumes[1].hostPath",
            "hostPath volumes",
        ),
        (context(privileged=True), f"{SC}.privileged", "privileged containers"),
        (
            context(capabilities={"add": ["CHOWN", "IPC_LOCK"]}),
            f"{SC}.capabilities.add[1]",
            "adding capability IPC_LOCK",
        ),
        (
            engine(ports=[{"containerPort": 8000, "hostPort": 8000}]),
            f"{C}.ports[0].hostPort",
            "host ports",
        ),
        (
            engine(livenessProbe={"httpGet": {"host": "10.0.0.1", "port": 80}}),
            f"{C}.livenessProbe.httpGet.host",
            "a httpGet host (10.0.0.1)",
        ),
        (
            engine(lifecycle={"preStop": {"tcpSocket": {"host": "metadata", "port": 80}}}),
            f"{C}.lifecycle.preStop.tcpSocket.host",
            "a tcpSocket host (metadata)",
        ),
        (
            context(procMount="Unmasked"),
            f"{SC}.procMount",
            "procMount Unmasked",
        ),
        (
            context(seccompProfile={"type": "Unconfined"}),
            f"{SC}.seccompProfile.type",
            "a seccomp profile of type Unconfined",
        ),
        (
            pod(securityContext={"appArmorProfile": {"type": "Unconfined"}}),
            f"{POD_SC}.appArmorProfile.type",
            "an AppArmor profile of type Unconfined",
        ),
        (
            context(seLinuxOptions={"type": "spc_t"}),
            f"{SC}.seLinuxOptions.type",
            "SELinux type spc_t",
        ),
        (
            pod(securityContext={"seLinuxOptions": {"user": "root"}}),
            f"{POD_SC}.seLinuxOptions.user",
            "setting the SELinux user",
        ),
        (
            context(windowsOptions={"hostProcess": True}),
            f"{SC}.windowsOptions.hostProcess",
            "Windows HostProcess",
        ),
        (
            pod(securityContext={"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}),
            f"{POD_SC}.sysctls[0].name",
            "sysctl kernel.msgmax",
        ),
        (
            {
                **pod(),
                "metadata": {
                    "annotations": {
                        "container.apparmor.security.beta.kubernetes.io/engine": "unconfined"
                    }
                },
            },
            f"{PATH}.metadata.annotations[container.apparmor.security.beta.kubernetes.io/engine]",
            "the AppArmor profile unconfined",
        ),
        (
            pod(initContainers=[{"name": "fetch", "securityContext": {"privileged": True}}]),
            f"{PATH}.spec.initContainers[0].securityContext.privileged",
            "privileged containers",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and "." not in value else None,
)
def test_each_baseline_rule_names_the_field_it_refuses(
    template: Obj, field: str, words: str
) -> None:
    (issue,) = baseline_issues(template, PATH)
    assert issue.path == field
    assert issue.message == f"Pod Security baseline forbids {words}"


@pytest.mark.parametrize(
    "template",
    [
        pod(),
        pod(hostNetwork=False, hostPID=False),
        context(privileged=False, procMount="Default", capabilities={"add": ["NET_BIND_SERVICE"]}),
        context(seccompProfile={"type": "RuntimeDefault"}, seLinuxOptions={"type": "container_t"}),
        pod(securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": "x"}}),
        pod(securityContext={"sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "5"}]}),
        engine(ports=[{"containerPort": 8000, "hostPort": 0}]),
        engine(readinessProbe={"httpGet": {"path": "/health", "port": 8000}}),
        # A pod in its own user namespace may set any /proc mount.
        {
            **context(procMount="Unmasked"),
            "spec": {**context(procMount="Unmasked")["spec"], "hostUsers": False},
        },
        # Shapes the schema or the API server refuse are not violations here.
        pod(hostNetwork="yes", volumes="none", containers=[7, {"securityContext": []}]),
    ],
)
def test_what_baseline_admits_is_no_issue(template: Obj) -> None:
    assert baseline_issues(template, PATH) == []


_FORBIDDEN_CAPABILITIES = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ_", min_size=1).filter(
    lambda name: name not in ALLOWED_CAPABILITIES
)


@given(
    allowed=st.lists(st.sampled_from(sorted(ALLOWED_CAPABILITIES))),
    forbidden=st.lists(_FORBIDDEN_CAPABILITIES, max_size=3),
    sysctls=st.lists(st.sampled_from(sorted(ALLOWED_SYSCTLS))),
)
def test_exactly_the_capabilities_beyond_the_default_set_are_refused(
    allowed: list[str], forbidden: list[str], sysctls: list[str]
) -> None:
    added = allowed + forbidden
    template = pod(
        containers=[{"name": "engine", "securityContext": {"capabilities": {"add": added}}}],
        securityContext={"sysctls": [{"name": name, "value": "1"} for name in sysctls]},
    )
    issues = baseline_issues(template, PATH)
    assert [issue.path for issue in issues] == [
        f"{SC}.capabilities.add[{i}]" for i, name in enumerate(added) if name in forbidden
    ]


def test_the_allowed_lists_are_pod_security_admissions() -> None:
    """Pinned to k8s.io/pod-security-admission (`capabilities_allowed_1_0`,
    `sysctlsAllowedV1Dot37`): a list that shrinks refuses templates every cluster
    admits, one that grows admits what they refuse."""
    assert {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    } == ALLOWED_CAPABILITIES
    assert {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
        "net.ipv4.tcp_slow_start_after_idle",
        "net.ipv4.tcp_notsent_lowat",
    } == ALLOWED_SYSCTLS


@pytest.mark.parametrize("profile", ["runtime/default", "localhost/engine", ""])
def test_an_apparmor_annotation_of_the_runtime_or_a_node_profile_is_admitted(profile: str) -> None:
    key = "container.apparmor.security.beta.kubernetes.io/engine"
    assert baseline_issues({**pod(), "metadata": {"annotations": {key: profile}}}, PATH) == []


def test_an_ephemeral_container_is_checked_as_the_others() -> None:
    template = pod(ephemeralContainers=[{"name": "debug", "securityContext": {"privileged": True}}])
    (issue,) = baseline_issues(template, PATH)
    assert issue.path == f"{PATH}.spec.ephemeralContainers[0].securityContext.privileged"


def test_capabilities_a_backend_grants_a_container_may_be_repeated_there_only() -> None:
    granted = {"engine": frozenset({"IPC_LOCK"})}
    own = context(capabilities={"add": ["IPC_LOCK"]})
    assert baseline_issues(own, PATH, granted) == []
    sidecar = pod(
        containers=[
            {"name": "engine"},
            {"name": "helper", "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}},
        ]
    )
    (issue,) = baseline_issues(sidecar, PATH, granted)
    assert issue.path == f"{PATH}.spec.containers[1].securityContext.capabilities.add[0]"
