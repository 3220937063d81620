"""Copy the XRDs and Compositions under apis/ into the modelplane-cli package.

An installed `modelplane` (pip or uv tool install, in a GitOps repository's CI)
has no checkout beside it, so the APIs it renders ship inside its package, in
`modelplane_cli/apis/`. `apis/` stays the one source: `make generate` runs this
to refresh the copy, and `make check-generated` runs it with `--check`, which
fails naming every file that drifted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "apis"
PACKAGED = ROOT / "cli" / "src" / "modelplane_cli" / "apis"
_SUFFIXES = (".yaml", ".yml")


def _files(directory: Path) -> dict[Path, bytes]:
    if not directory.is_dir():
        return {}
    return {
        p.relative_to(directory): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.suffix in _SUFFIXES
    }


def drift() -> list[str]:
    """Every packaged file that differs from apis/, is missing, or is extra."""
    source, packaged = _files(SOURCE), _files(PACKAGED)
    found: list[str] = []
    for path in sorted(source.keys() | packaged.keys()):
        if path not in packaged:
            found.append(f"{PACKAGED / path}: missing (a copy of {SOURCE / path})")
        elif path not in source:
            found.append(f"{PACKAGED / path}: not in {SOURCE}")
        elif source[path] != packaged[path]:
            found.append(f"{PACKAGED / path}: differs from {SOURCE / path}")
    return found


def sync() -> None:
    source = _files(SOURCE)
    for path in _files(PACKAGED):
        if path not in source:
            (PACKAGED / path).unlink()
    for path, content in source.items():
        target = PACKAGED / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.read_bytes() != content:
            target.write_bytes(content)
    for directory in sorted(PACKAGED.rglob("*"), reverse=True):
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()


def main() -> int:
    parser = argparse.ArgumentParser(description="Copy apis/ into the modelplane-cli package.")
    parser.add_argument("--check", action="store_true", help="fail if the copy drifted")
    args = parser.parse_args()
    if args.check:
        problems = drift()
        for problem in problems:
            print(f"error: {problem} (run make generate)", file=sys.stderr)
        return 1 if problems else 0
    sync()
    return 0


if __name__ == "__main__":
    sys.exit(main())
