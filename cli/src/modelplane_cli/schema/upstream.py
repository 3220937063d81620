"""The upstream CRDs Modelplane validates against: where they are, and fetching them.

`upstream-crds.yaml` pins each file (its URL at a commit, the release it belongs
to, its sha256). `make crds` downloads them into `.crds/` beside the checkout;
the tests and `render` read `.crds/`, else the directory MODELPLANE_CRDS names,
else the shared directory beside the checkout (`../shared/crds`).

A download is all or nothing: the files are fetched into `.crds.partial/`, each
checked against its sha256, and only a complete set replaces `.crds/`, so a
`.crds/` that exists holds every pinned file.
"""

import argparse
import hashlib
import os
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast

import yaml

ENVIRONMENT: Final = "MODELPLANE_CRDS"
PINS_FILE: Final = "upstream-crds.yaml"
DOWNLOAD_DIRECTORY: Final = ".crds"
_TIMEOUT_SECONDS: Final = 60
_PIN_FIELDS: Final = ("file", "url", "version", "sha256")
# Schemas of Modelplane's own for kinds it composes on workload clusters that the
# shared CRDs do not carry (each file says where it is transcribed from); read
# before the upstream CRDs, so an upstream definition of the same kind wins.
STANDIN_DIRECTORY: Final = Path(__file__).with_name("standins")


def checkout_root() -> Path | None:
    """The root of the source checkout this module runs from; None when installed."""
    # cli/src/modelplane_cli/schema/upstream.py in a checkout; an installed package
    # has no checkout, so nothing beside it counts.
    here = Path(__file__).resolve()
    if here.parents[3].name != "cli" or here.parents[2].name != "src":
        return None
    return here.parents[4]


def crd_directories() -> list[Path]:
    """Where the upstream CRDs are looked for, in order: `.crds/` of the checkout,
    MODELPLANE_CRDS when set, the shared directory beside the checkout."""
    root = checkout_root()
    candidates: list[Path] = []
    if root is not None:
        candidates.append(root / DOWNLOAD_DIRECTORY)
    configured = os.environ.get(ENVIRONMENT)
    if configured:
        candidates.append(Path(configured))
    if root is not None:
        candidates.append(root.parent / "shared" / "crds")
    return candidates


def reference_crd_directory() -> Path | None:
    """The first directory of `crd_directories` that exists; None when none does."""
    return next((d for d in crd_directories() if d.is_dir()), None)


def missing_crds_message() -> str:
    """What to do when `reference_crd_directory` finds nothing."""
    looked = ", ".join(str(d) for d in crd_directories()) or f"{ENVIRONMENT} (unset)"
    return f"no upstream CRDs (looked in {looked}): run `make crds`, or set {ENVIRONMENT}"


@dataclass(frozen=True)
class Pin:
    """One upstream CRD file: where it is downloaded from, and what it must hash to."""

    file: str
    url: str
    version: str
    sha256: str


class PinError(ValueError):
    """The pin list is malformed."""


class DownloadError(Exception):
    """One or more pinned files could not be fetched or did not match their sha256."""


def read_pins(path: Path) -> list[Pin]:
    """The pins in `path`: a YAML list of {file, url, version, sha256}."""
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(loaded, list):
        raise PinError(f"{path}: expected a list of pins")
    pins: list[Pin] = []
    seen: set[str] = set()
    for index, entry in enumerate(cast(list[Any], loaded)):
        if not isinstance(entry, dict) or set(cast(dict[str, Any], entry)) != set(_PIN_FIELDS):
            raise PinError(f"{path}[{index}]: a pin has exactly {', '.join(_PIN_FIELDS)}")
        fields = cast(dict[str, Any], entry)
        if not all(isinstance(fields[f], str) and fields[f] for f in _PIN_FIELDS):
            raise PinError(f"{path}[{index}]: every field of a pin is a non-empty string")
        pin = Pin(**{f: str(fields[f]) for f in _PIN_FIELDS})
        if Path(pin.file).name != pin.file or not pin.file.endswith(".yaml"):
            raise PinError(f"{path}[{index}]: file {pin.file!r} is not a plain .yaml name")
        if len(pin.sha256) != 64 or any(c not in "0123456789abcdef" for c in pin.sha256):
            raise PinError(f"{path}[{index}]: sha256 {pin.sha256!r} is not 64 lower-case hex")
        if pin.file in seen:
            raise PinError(f"{path}[{index}]: {pin.file} is pinned twice")
        seen.add(pin.file)
        pins.append(pin)
    return pins


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fetch(pin: Pin, mirror: Path | None) -> bytes:
    if mirror is not None:
        source = mirror / pin.file
        try:
            return source.read_bytes()
        except OSError as exc:
            raise DownloadError(f"{pin.file}: cannot read {source}: {exc.strerror}") from exc
    try:
        with urllib.request.urlopen(pin.url, timeout=_TIMEOUT_SECONDS) as answer:
            return cast(bytes, answer.read())
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"{pin.file}: {pin.url} answered {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"{pin.file}: cannot download {pin.url}: {reason}") from exc


def download(pins: Sequence[Pin], into: Path, mirror: Path | None = None) -> int:
    """Every pinned file in `into`, each matching its sha256; returns how many were fetched.

    A file already in `into` with the pinned sha256 is kept; the others are fetched
    from their URL (or, with `mirror`, read from the file of the same name there).
    Raises DownloadError naming every file that failed, and then leaves `into` as it
    was.
    """
    staging = into.with_name(into.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    problems: list[str] = []
    fetched = 0
    for pin in pins:
        present = into / pin.file
        if present.is_file() and sha256_of(present.read_bytes()) == pin.sha256:
            shutil.copyfile(present, staging / pin.file)
            continue
        try:
            data = _fetch(pin, mirror)
        except DownloadError as exc:
            problems.append(str(exc))
            continue
        got = sha256_of(data)
        if got != pin.sha256:
            origin = mirror / pin.file if mirror is not None else pin.url
            problems.append(f"{pin.file}: sha256 of {origin} is {got}, pinned {pin.sha256}")
            continue
        (staging / pin.file).write_bytes(data)
        fetched += 1
    if problems:
        shutil.rmtree(staging, ignore_errors=True)
        raise DownloadError("\n".join(problems))
    shutil.rmtree(into, ignore_errors=True)
    staging.rename(into)
    return fetched


def main(argv: Sequence[str] | None = None) -> int:
    root = checkout_root() or Path.cwd()
    parser = argparse.ArgumentParser(
        prog="make crds", description="Download the pinned upstream CRDs."
    )
    parser.add_argument("--pins", type=Path, default=root / PINS_FILE)
    parser.add_argument("--into", type=Path, default=root / DOWNLOAD_DIRECTORY)
    parser.add_argument(
        "--mirror",
        type=Path,
        help="read each file from this directory instead of its URL (still checked)",
    )
    args = parser.parse_args(argv)
    try:
        pins = read_pins(args.pins)
        fetched = download(pins, args.into, args.mirror)
    except (PinError, OSError) as exc:
        print(f"make crds: {exc}", file=sys.stderr)
        return 1
    except DownloadError as exc:
        print(f"make crds: {args.into} left unchanged; failed:\n{exc}", file=sys.stderr)
        return 1
    print(f"{len(pins)} upstream CRDs in {args.into} ({fetched} fetched)")
    return 0
