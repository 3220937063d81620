"""Opening a page in headless Chromium as a person would, and reading what it shows.

`open_page` renders a file with Debian's `chromium` (installed by `.ci/run`):
once for the DOM after its scripts ran (`--dump-dom`) and once for a
screenshot. `pixels` decodes the screenshot (8-bit RGB or RGBA, not interlaced,
the PNGs Chromium writes) so a test can tell a drawn page from a blank one.
Without Chromium the test is skipped, except in CI (`CI=true`), where it fails.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    """The browser's path; skips the test without one, fails it in CI."""
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    message = "headless Chromium is needed (apt-get install chromium; .ci/run installs it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@dataclass(frozen=True)
class Page:
    dom: str
    screenshot: Path


def open_page(page: Path, out: Path, *, width: int = 1280, height: int = 1000) -> Page:
    browser = chromium()
    common = [
        browser,
        "--headless",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={out / 'profile'}",
        f"--window-size={width},{height}",
    ]
    url = page.resolve().as_uri()
    shot = out / "screenshot.png"
    # One launch gives both (headless Chromium dumps the DOM and takes the screenshot of
    # the same loaded page); a browser that takes only one is asked again for the other.
    dom = subprocess.run(
        [*common, "--dump-dom", f"--screenshot={shot}", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    if not shot.exists():
        subprocess.run(
            [*common, f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True
        )
    return Page(dom, shot)


def pixels(png: Path) -> np.ndarray:
    """The image as a (height, width, channels) array of bytes."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour in (2, 6), (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    out = np.zeros((height, width * channels), dtype=np.int32)
    previous = np.zeros(width * channels, dtype=np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 0:
            row = line
        elif kind == 2:
            row = (line + previous) % 256
        elif kind == 1:
            row = line.reshape(width, channels).cumsum(axis=0).reshape(-1) % 256
        else:
            row = _sequential(line.tolist(), previous.tolist(), channels, int(kind))
        out[y] = row
        previous = row
    return out.reshape(height, width, channels).astype(np.uint8)


def _sequential(line: list[int], up: list[int], bpp: int, kind: int) -> np.ndarray:
    """Average (3) and Paeth (4) filters, which depend on the byte just decoded."""
    row = list(line)
    # The first pixel has no left neighbour (nor a corner): both count as 0, so Average
    # adds half the byte above and Paeth predicts the byte above.
    for i in range(min(bpp, len(row))):
        row[i] = (row[i] + (up[i] // 2 if kind == 3 else up[i])) % 256
    if kind == 3:
        for i in range(bpp, len(row)):
            row[i] = (row[i] + (row[i - bpp] + up[i]) // 2) % 256
        return np.array(row, dtype=np.int32)
    for i in range(bpp, len(row)):
        left, above, corner = row[i - bpp], up[i], up[i - bpp]
        # |p - left|, |p - above|, |p - corner| for p = left + above - corner.
        pa, pb = above - corner, left - corner
        pc = abs(pa + pb)
        pa, pb = abs(pa), abs(pb)
        predictor = left if pa <= pb and pa <= pc else above if pb <= pc else corner
        row[i] = (row[i] + predictor) % 256
    return np.array(row, dtype=np.int32)
