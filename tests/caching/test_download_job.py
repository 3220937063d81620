"""The Native download Job's shape (who it writes the cache as, its name), and when a
failed download is tried again."""

from datetime import timedelta

import pytest

from modelplane.caching import native
from modelplane.caching.retry import backoff
from modelplane.caching.spec import CacheSpec


def spec(uri: str = "hf://org/model", gib: int = 20) -> CacheSpec:
    return CacheSpec(
        name="weights",
        namespace="ml",
        uri=uri,
        scheme=uri.split("://", 1)[0],
        size=f"{gib}Gi",
        size_bytes=gib * 2**30,
    )


@pytest.mark.parametrize("uri", ["hf://org/model", "s3://bucket/model", "gs://bucket/model"])
def test_the_download_writes_as_root(uri: str) -> None:
    # NFS-style ReadWriteMany volumes (Filestore, CephFS) export a root-owned root, and
    # CSI drivers commonly skip fsGroup for ReadWriteMany, so the storage-initializer
    # image's UID 1000 could not create /cache/model there.
    job = native.job(spec(uri), "mp-ml", 1)
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["securityContext"] == {"runAsUser": 0, "runAsGroup": 0}


def test_a_changed_spec_is_a_new_job_name() -> None:
    small, big = native.job(spec(), "mp-ml", 1), native.job(spec(gib=30), "mp-ml", 1)
    assert small["metadata"]["name"] != big["metadata"]["name"]
    assert native.job(spec(), "mp-ml", 1) == small


def test_the_backoff_doubles_from_a_minute_up_to_an_hour() -> None:
    minutes = [backoff(n) / timedelta(minutes=1) for n in range(1, 10)]
    assert minutes == [1, 2, 4, 8, 16, 32, 60, 60, 60]
