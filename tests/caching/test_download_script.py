"""The Native download Job's script, run for real with POSIX sh against a stand-in `aws`
CLI over a local directory: idempotent, resumable, checked before it is marked."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

from modelplane.caching import native

# Copies the local "bucket" $FAKE_BUCKET into DEST, skipping files already there at the
# same size (as `aws s3 sync` does) and any named in $FAKE_SKIP (a flaky transfer);
# with --dryrun prints what it would copy. Each call is logged to $FAKE_LOG.
FAKE_AWS = r"""#!/bin/sh
echo "$*" >> "$FAKE_LOG"
dry=""; src=""; dest=""
for arg in "$@"; do
  case "$arg" in
    s3|sync|--only-show-errors) ;;
    --dryrun) dry=1 ;;
    s3://*) src="$arg" ;;
    *) dest="$arg" ;;
  esac
done
for file in $(ls "$FAKE_BUCKET"); do
  if [ -f "$dest/$file" ] && [ "$(wc -c < "$dest/$file")" = "$(wc -c < "$FAKE_BUCKET/$file")" ]; then
    continue
  fi
  if [ -n "$dry" ]; then echo "(dryrun) download: $src/$file to $dest/$file"; continue; fi
  if [ "$file" = "${FAKE_SKIP:-}" ]; then continue; fi
  cp "$FAKE_BUCKET/$file" "$dest/$file"
done
"""


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    aws = bin_dir / "aws"
    aws.write_text(FAKE_AWS)
    aws.chmod(aws.stat().st_mode | stat.S_IEXEC)
    bucket = tmp_path / "bucket"
    bucket.mkdir()
    (bucket / "config.json").write_text("{}")
    (bucket / "model.safetensors").write_bytes(b"w" * 4096)
    return {"bin": bin_dir, "bucket": bucket, "cache": tmp_path / "cache", "log": tmp_path / "log"}


def download(
    world: dict[str, Path], size: int = 1 << 20, skip: str = ""
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{world['bin']}:{os.environ['PATH']}",
        native.ENV_URI: "s3://bucket/model",
        native.ENV_DIR: str(world["cache"]),
        native.ENV_SIZE: str(size),
        "FAKE_BUCKET": str(world["bucket"]),
        "FAKE_LOG": str(world["log"]),
        "FAKE_SKIP": skip,
    }
    world["cache"].mkdir(exist_ok=True)
    script = native.DOWNLOADERS["s3"].script()
    return subprocess.run(
        ["sh", "-c", script], env=env, capture_output=True, text=True, check=False
    )


def calls(world: dict[str, Path]) -> list[str]:
    return world["log"].read_text().splitlines() if world["log"].exists() else []


def test_it_downloads_checks_and_marks(world: dict[str, Path]) -> None:
    done = download(world)
    assert done.returncode == 0, done.stderr
    model = world["cache"] / "model"
    assert sorted(p.name for p in model.iterdir()) == ["config.json", "model.safetensors"]
    assert (world["cache"] / native.MARKER).read_text() == "s3://bucket/model"
    assert "model.safetensors" in (world["cache"] / native.MANIFEST).read_text()
    assert len(calls(world)) == 2  # the sync, then the dry run that finds nothing left


def test_a_complete_cache_is_not_downloaded_again(world: dict[str, Path]) -> None:
    assert download(world).returncode == 0
    before = calls(world)
    again = download(world)
    assert again.returncode == 0, again.stderr
    assert "already complete" in again.stdout
    assert calls(world) == before


def test_an_incomplete_download_is_not_marked_and_resumes(world: dict[str, Path]) -> None:
    flaky = download(world, skip="model.safetensors")
    assert flaky.returncode != 0
    assert "incomplete" in flaky.stderr
    assert not (world["cache"] / native.MARKER).exists()
    # The next attempt copies only what is missing, then marks it complete.
    resumed = download(world)
    assert resumed.returncode == 0, resumed.stderr
    assert (world["cache"] / native.MARKER).exists()


def test_weights_larger_than_the_size_are_refused(world: dict[str, Path]) -> None:
    too_big = download(world, size=1024)
    assert too_big.returncode != 0
    assert "more than spec.size" in too_big.stderr
    assert not (world["cache"] / native.MARKER).exists()
