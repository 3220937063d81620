"""Cloud resource names: most upjet kinds take their external name from
`metadata.name`, so a composed name must fit the cloud's own rules as well as
Kubernetes'. An InferenceCluster name may be a DNS subdomain (dots, 253
characters); clouds want short DNS labels that start with a letter."""

from modelplane.core.naming import hashed_name


def cloud_name(cluster: str, suffix: str = "", max_len: int = 63) -> str:
    """`<cluster>-<suffix>` when that fits `max_len` and a cloud's rules; otherwise a
    readable prefix and a digest of both parts, so two clusters never share a name
    (`a.b` and `a-b` included)."""
    base = cluster.replace(".", "-")
    if not base[:1].isalpha():
        base = f"mp-{base}"
    name = f"{base}-{suffix}" if suffix else base
    if len(name) <= max_len and base == cluster:
        return name
    return hashed_name(name, cluster, suffix, max_len=max_len)


def kubeconfig_secret(cluster: str, namespace: str) -> dict[str, str]:
    """Where a created cluster's kubeconfig is written (the provider's connection
    Secret): the same shape on every cloud, read by both ProviderConfigs."""
    return {
        "name": cloud_name(cluster, "kubeconfig", 253),
        "namespace": namespace,
        "key": "kubeconfig",
    }
