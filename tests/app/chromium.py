"""Headless Chromium for the report's browser tests: find it, dump the DOM, take a screenshot,
and read the PNG back (stdlib only: zlib and the five PNG filters).

Where ``CI=true`` a missing Chromium fails the test: CI installs Debian's ``chromium`` (``.ci/run``),
so the browser test must run there. Elsewhere it skips."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-color-profile=srgb",
         "--force-device-scale-factor=1", "--no-first-run", "--disable-extensions"]


def find_chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true and no chromium on PATH: .ci/run installs Debian's chromium")
    pytest.skip("no chromium on PATH (apt-get install chromium)")


def dump_dom(chromium: str, page: Path) -> str:
    return subprocess.run([chromium, *FLAGS, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                          timeout=120, check=True).stdout


def screenshot(chromium: str, page: Path, out: Path, size: tuple[int, int] = (1400, 1000)) -> Path:
    subprocess.run([chromium, *FLAGS, f"--window-size={size[0]},{size[1]}", f"--screenshot={out}", page.as_uri()],
                   capture_output=True, timeout=120, check=True, cwd=out.parent)
    return out


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and the rows as RGB bytes, for 8-bit RGB or RGBA non-interlaced PNGs (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        prev = line
        rows.append(bytes(line) if bpp == 3 else bytes(v for j, v in enumerate(line) if j % 4 != 3))
    return width, height, rows


def colour_counts(rows: list[bytes]) -> dict[tuple[int, int, int], int]:
    counts: dict[tuple[int, int, int], int] = {}
    for row in rows:
        for i in range(0, len(row), 3):
            px = (row[i], row[i + 1], row[i + 2])
            counts[px] = counts.get(px, 0) + 1
    return counts
