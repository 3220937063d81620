"""A cache on a Native cluster: a ReadWriteMany PersistentVolumeClaim and the Job that
fills it.

The Job (`batch/v1`, in the team's tenant namespace, beside its replicas) runs one
container, `download`, with the cache volume at `/cache`, and `/bin/sh -c` a script
made of three parts:

1. **Idempotent.** If `/cache/.modelplane-complete` exists and holds the cache's
   URI, the weights are there: exit 0 at once. A Job that runs again (a retry,
   a re-created Job, a second deployment) never downloads twice.
2. **Fetch, resumable.** Into `/cache/model`, with the scheme's own tool, each of
   which skips what is already complete, so an attempt that died half way
   resumes where it stopped: `hf://` with huggingface_hub's `snapshot_download`
   (in KServe's storage-initializer image, which ships it), `s3://` with
   `aws s3 sync` (amazon/aws-cli), `gs://` with `gcloud storage rsync`
   (google-cloud-cli). The credentials Secret's keys are the container's
   environment (`HF_TOKEN`; `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
   `AWS_REGION`; `CLOUDSDK_AUTH_ACCESS_TOKEN`).
3. **Checked, then marked.** Complete against the source (every file of the Hub
   repository present at its size; `sync --dryrun` / `rsync --dry-run` with
   nothing left to copy), no larger than `spec.size`, and not empty; the file
   list goes to `/cache/.modelplane-manifest`, and only then is the marker
   written (to a temporary name, then renamed), so a marker always means whole
   weights.

A failed check exits non-zero: the Job's pod is retried (`backoffLimit`), and a
Job that fails for good is replaced by the next attempt (`compose-model-cache`).

The container runs as root (`securityContext`, see `_job_spec`): the tenant
namespace must admit that (Pod Security `baseline`, not `restricted`), and the
volume must not squash root (EFS access points map every user and need nothing).

A Job's pod template is immutable, so the Job's name carries a digest of its spec
(`job_revision`): a change of `spec.size`, the credentials, or the downloader's
image or script makes a new Job (which finds the marker and exits at once when the
URI is unchanged) instead of an update the API server refuses for good.
"""

import json
from dataclasses import dataclass
from typing import Any, Final

from modelplane.caching.spec import CacheSpec
from modelplane.core.naming import digest, hashed_name
from modelplane.core.vocabulary import LABEL_MANAGED_BY, LABEL_MODEL_CACHE, MANAGED_BY

CACHE_DIR: Final = "/cache"
WEIGHTS_DIR: Final = "model"
MARKER: Final = ".modelplane-complete"
MANIFEST: Final = ".modelplane-manifest"
BACKOFF_LIMIT: Final = 3
DOWNLOAD_CONTAINER: Final = "download"
ENV_URI: Final = "MODELPLANE_CACHE_URI"
ENV_DIR: Final = "MODELPLANE_CACHE_DIR"
ENV_SIZE: Final = "MODELPLANE_CACHE_SIZE_BYTES"

_FETCH_HF = """python3 - <<'PY'
import os
from huggingface_hub import HfApi, snapshot_download
repo, _, revision = os.environ["MODELPLANE_CACHE_URI"][len("hf://"):].partition(":")
dest = os.path.join(os.environ["MODELPLANE_CACHE_DIR"], "model")
snapshot_download(repo_id=repo, revision=revision or None, local_dir=dest)
info = HfApi().model_info(repo, revision=revision or None, files_metadata=True)
short = []
for sibling in info.siblings or []:
    path = os.path.join(dest, sibling.rfilename)
    size = os.path.getsize(path) if os.path.isfile(path) else -1
    if size < 0 or (sibling.size is not None and size != sibling.size):
        short.append(sibling.rfilename)
if short:
    raise SystemExit(f"incomplete: {len(short)} files missing or short, first {short[0]}")
PY
"""

_FETCH_S3 = """dest="$MODELPLANE_CACHE_DIR/model"
aws s3 sync --only-show-errors "$MODELPLANE_CACHE_URI" "$dest"
left=$(aws s3 sync --dryrun "$MODELPLANE_CACHE_URI" "$dest")
if [ -n "$left" ]; then echo "incomplete: $left" >&2; exit 1; fi
"""

_FETCH_GS = """dest="$MODELPLANE_CACHE_DIR/model"
gcloud storage rsync --recursive "$MODELPLANE_CACHE_URI" "$dest"
left=$(gcloud storage rsync --recursive --dry-run "$MODELPLANE_CACHE_URI" "$dest" 2>&1)
if printf '%s' "$left" | grep -q "Would copy"; then
  echo "incomplete: files left to copy" >&2; exit 1
fi
"""

_BEFORE = """set -eu
dir="$MODELPLANE_CACHE_DIR"
marker="$dir/.modelplane-complete"
if [ -f "$marker" ] && [ "$(cat "$marker")" = "$MODELPLANE_CACHE_URI" ]; then
  echo "$MODELPLANE_CACHE_URI is already complete in $dir"; exit 0
fi
mkdir -p "$dir/model"
"""

_AFTER = """if [ -z "$(ls -A "$dir/model")" ]; then
  echo "incomplete: nothing downloaded" >&2; exit 1
fi
used=$(du -sk "$dir/model" | cut -f1)
if [ "$used" -gt $((MODELPLANE_CACHE_SIZE_BYTES / 1024)) ]; then
  echo "the weights take ${used}KiB, more than spec.size" >&2; exit 1
fi
ls -lR "$dir/model" > "$dir/.modelplane-manifest"
printf '%s' "$MODELPLANE_CACHE_URI" > "$marker.tmp"
mv "$marker.tmp" "$marker"
echo "$MODELPLANE_CACHE_URI is complete in $dir"
"""


@dataclass(frozen=True)
class Downloader:
    """The image and fetch step for one URI scheme."""

    image: str
    fetch: str

    def script(self) -> str:
        return _BEFORE + self.fetch + _AFTER


DOWNLOADERS: Final = {
    "hf": Downloader("kserve/storage-initializer:v0.16.0", _FETCH_HF),
    "s3": Downloader("amazon/aws-cli:2.22.0", _FETCH_S3),
    "gs": Downloader("gcr.io/google.com/cloudsdktool/google-cloud-cli:502.0.0-slim", _FETCH_GS),
}


def _labels(cache: CacheSpec) -> dict[str, str]:
    return {LABEL_MANAGED_BY: MANAGED_BY, LABEL_MODEL_CACHE: cache.name}


def claim_name(cache: CacheSpec) -> str:
    """The PersistentVolumeClaim holding the cache in its tenant namespace; what the
    engines mount."""
    return hashed_name(f"modelcache-{cache.name}", cache.namespace, cache.name)


def job_name(cache: CacheSpec, attempt: int, revision: str) -> str:
    return hashed_name(
        f"modelcache-{cache.name}-{attempt}",
        cache.namespace,
        cache.name,
        str(attempt),
        revision,
    )


def job_revision(cache: CacheSpec) -> str:
    """A digest of the download Job's spec (what its immutable template holds)."""
    spec = _job_spec(cache)
    return digest(json.dumps(spec, sort_keys=True, separators=(",", ":")))


def secret_name(cache: CacheSpec) -> str:
    return hashed_name(f"modelcache-{cache.name}-credentials", cache.namespace, cache.name)


def claim(cache: CacheSpec, namespace: str, storage_class: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim_name(cache), "namespace": namespace, "labels": _labels(cache)},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": cache.size}},
        },
    }


def credentials(cache: CacheSpec, namespace: str) -> dict[str, Any]:
    """The credentials Secret on the workload cluster. Its data is copied from the
    control plane's Secret by the Object's `references` (`credentials_references`)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": secret_name(cache), "namespace": namespace, "labels": _labels(cache)},
        "type": "Opaque",
    }


def credentials_references(cache: CacheSpec) -> list[dict[str, Any]]:
    """provider-kubernetes `spec.references` that patch the team's Secret's data (read
    on the control plane, in the ModelCache's namespace) into the copy."""
    if cache.credentials is None:
        return []
    return [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": cache.credentials,
                "namespace": cache.namespace,
                "fieldPath": "data",
            },
            "toFieldPath": "data",
        }
    ]


def job(cache: CacheSpec, namespace: str, attempt: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(cache, attempt, job_revision(cache)),
            "namespace": namespace,
            "labels": _labels(cache),
        },
        "spec": _job_spec(cache),
    }


def _job_spec(cache: CacheSpec) -> dict[str, Any]:
    downloader = DOWNLOADERS[cache.scheme]
    container: dict[str, Any] = {
        "name": DOWNLOAD_CONTAINER,
        "image": downloader.image,
        "command": ["/bin/sh", "-c", downloader.script()],
        "env": [
            {"name": ENV_URI, "value": cache.uri},
            {"name": ENV_DIR, "value": CACHE_DIR},
            {"name": ENV_SIZE, "value": str(cache.size_bytes)},
        ],
        "volumeMounts": [{"name": "cache", "mountPath": CACHE_DIR}],
        # As root, whatever the image's user (the storage-initializer image runs as UID
        # 1000): an NFS-style ReadWriteMany volume (Filestore, CephFS) has a root-owned
        # root directory, and fsGroup does not help there, since a CSI driver's default
        # fsGroupPolicy (ReadWriteOnceWithFSType) changes ownership of ReadWriteOnce
        # volumes only. Files land mode 644/755, so engines of any UID read them.
        "securityContext": {"runAsUser": 0, "runAsGroup": 0},
    }
    if cache.credentials is not None:
        container["envFrom"] = [{"secretRef": {"name": secret_name(cache)}}]
    return {
        "backoffLimit": BACKOFF_LIMIT,
        "template": {
            "metadata": {"labels": _labels(cache)},
            "spec": {
                "restartPolicy": "Never",
                "containers": [container],
                "volumes": [
                    {"name": "cache", "persistentVolumeClaim": {"claimName": claim_name(cache)}}
                ],
            },
        },
    }
