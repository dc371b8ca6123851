"""Captured frames: a downscaled RGB image at a virtual time, plus what the canvas drew."""

from __future__ import annotations

import base64
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ._imaging import Image, decode_png, encode_png

__all__ = ["Frame", "frame_from_capture", "frame_from_png", "unpack"]


@dataclass
class Frame:
    """One capture.

    ``image`` is the largest visible canvas (layered canvases composed) downscaled to about
    160 px wide; for pages without a canvas, a raster of the viewport's element boxes (background
    colours, rounded boxes, images, text) drawn by ``_clock.js``, or a scaled screenshot
    (``PageSession.snapshot``).
    ``circles`` are the arcs/ellipses (sweep >= pi) drawn on that canvas in the last frame that
    drew any, as ``(x, y, r)`` in canvas pixels; ``canvas_size`` is the canvas backing size
    (None for screenshots) and ``rect`` its CSS-pixel box ``(left, top, width, height)`` in
    the viewport (the viewport itself for screenshots).
    """

    t_ms: float
    image: Image
    circles: list[tuple[float, float, float]] = field(default_factory=list)
    canvas_size: tuple[int, int] | None = None
    rect: tuple[float, float, float, float] | None = None

    @property
    def width(self) -> int:
        return self.image.width

    @property
    def height(self) -> int:
        return self.image.height

    @property
    def pixels(self) -> bytes:
        """RGB bytes, row-major, width * height * 3."""
        return self.image.rgb

    @cached_property
    def png(self) -> bytes:
        """The downscaled frame as PNG (for evidence)."""
        return encode_png(self.image)


def unpack(data: str) -> bytes:
    """Inflate a batch of raw RGBA captures sent by ``_clock.js`` (base64 of deflate)."""
    return zlib.decompress(base64.b64decode(data)) if data else b""


def rgba_to_rgb(rgba: bytes) -> bytes:
    """Drop every fourth (alpha) byte, at C speed."""
    out = bytearray(len(rgba) // 4 * 3)
    out[0::3], out[1::3], out[2::3] = rgba[0::4], rgba[1::4], rgba[2::4]
    return bytes(out)


def frame_from_capture(t_ms: float, data: dict[str, Any], rgba: bytes) -> Frame:
    """Build a Frame from one capture's metadata and its RGBA bytes."""
    image = Image(int(data["w"]), int(data["h"]), rgba_to_rgb(rgba))
    canvas = data.get("canvas")
    return Frame(t_ms=t_ms, image=image,
                 circles=[(float(x), float(y), float(r)) for x, y, r in data.get("circles", [])],
                 canvas_size=(int(canvas[0]), int(canvas[1])) if canvas else None,
                 rect=tuple(data["rect"]))  # type: ignore[arg-type]


def frame_from_png(t_ms: float, png: bytes, viewport: tuple[int, int]) -> Frame:
    """Build a Frame from a (scaled) screenshot of the viewport."""
    return Frame(t_ms=t_ms, image=decode_png(png), rect=(0.0, 0.0, float(viewport[0]), float(viewport[1])))
