"""Small-image arithmetic without numpy: PNG encode/decode (zlib + struct), grey levels,
frame distances, difference masks, blobs and filmstrips.

Frames are tiny (about 160 px wide, RGB bytes), so most work here is plain Python. Distances
between many frame pairs (the refresh-rate search compares hundreds of pairs) use a thermometer
code: each channel is quantised to 0..8 and written as that many set bits, so the L1 distance
between two quantised images is ``(a ^ b).bit_count()`` on two big ints, computed in C.
"""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from dataclasses import dataclass

__all__ = [
    "Image",
    "blobs",
    "decode_png",
    "diff_mask",
    "encode_png",
    "filmstrip",
    "thermo",
    "thermo_distance",
]

# Thermometer code: channel value -> byte with q set bits, q = round(value / 32) in 0..8.
_THERMO = bytes((1 << min(8, (v + 16) // 32)) - 1 for v in range(256))


@dataclass(frozen=True)
class Image:
    """An RGB image: ``rgb`` holds width * height * 3 bytes, row-major."""

    width: int
    height: int
    rgb: bytes

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        i = (y * self.width + x) * 3
        return self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]

    def gray(self) -> bytes:
        """Luma per pixel (0..255), integer Rec. 601 weights."""
        c = self.rgb
        return bytes((c[i] * 77 + c[i + 1] * 150 + c[i + 2] * 29) >> 8 for i in range(0, len(c), 3))

    def dominant(self) -> tuple[tuple[int, int, int], float]:
        """The most common colour and the share of pixels that have it."""
        c = self.rgb
        counts = Counter(c[i:i + 3] for i in range(0, len(c), 3))
        colour, n = counts.most_common(1)[0]
        return (colour[0], colour[1], colour[2]), n / max(1, self.width * self.height)

    def crop_rows(self, y0: int, y1: int) -> Image:
        y0, y1 = max(0, y0), min(self.height, y1)
        return Image(self.width, max(0, y1 - y0), self.rgb[y0 * self.width * 3:y1 * self.width * 3])

    def resized(self, width: int) -> Image:
        """Nearest-neighbour resize to ``width`` (aspect kept): enough for evidence and search."""
        if width >= self.width:
            return self
        height = max(1, round(self.height * width / self.width))
        out = bytearray(width * height * 3)
        xs = [min(self.width - 1, (x * self.width) // width) * 3 for x in range(width)]
        for y in range(height):
            row = min(self.height - 1, (y * self.height) // height) * self.width * 3
            o = y * width * 3
            for sx in xs:
                out[o:o + 3] = self.rgb[row + sx:row + sx + 3]
                o += 3
        return Image(width, height, bytes(out))


def thermo(img: Image) -> int:
    """Thermometer code of an image as one big int (see the module docstring)."""
    return int.from_bytes(img.rgb.translate(_THERMO), "little")


def thermo_distance(a: int, b: int, pixels: int) -> float:
    """Mean per-channel distance between two thermometer codes, in quantisation steps (0..8)."""
    return (a ^ b).bit_count() / max(1, pixels * 3)


def diff_mask(a: Image, b: Image, threshold: int = 40) -> bytearray:
    """1 where the two images differ by more than ``threshold`` (sum over channels), else 0."""
    if (a.width, a.height) != (b.width, b.height):
        raise ValueError("images differ in size")
    ra, rb = a.rgb, b.rgb
    out = bytearray(a.width * a.height)
    if ra == rb:
        return out
    stride = a.width * 3
    for y in range(a.height):
        row = y * stride
        if ra[row:row + stride] == rb[row:row + stride]:
            continue  # most rows are identical: skip them at C speed
        for p in range(y * a.width, (y + 1) * a.width):
            i = p * 3
            d = abs(ra[i] - rb[i]) + abs(ra[i + 1] - rb[i + 1]) + abs(ra[i + 2] - rb[i + 2])
            if d > threshold:
                out[p] = 1
    return out


@dataclass(frozen=True)
class Blob:
    """A connected region of a mask: its pixel indices and bounding box."""

    pixels: tuple[int, ...]
    x0: int
    y0: int
    x1: int
    y1: int

    @property
    def size(self) -> int:
        return len(self.pixels)


def blobs(mask: bytearray | bytes, width: int, height: int, min_size: int = 1) -> list[Blob]:
    """8-connected components of a 0/1 mask, largest first."""
    seen = bytearray(len(mask))
    found: list[Blob] = []
    start = -1
    while (start := mask.find(1, start + 1)) >= 0:  # the next set pixel, found at C speed
        if seen[start]:
            continue
        seen[start] = 1
        stack = [start]
        members = []
        while stack:
            p = stack.pop()
            members.append(p)
            y, x = divmod(p, width)
            for dy in (-1, 0, 1):
                ny = y + dy
                if ny < 0 or ny >= height:
                    continue
                for dx in (-1, 0, 1):
                    nx = x + dx
                    if nx < 0 or nx >= width:
                        continue
                    q = ny * width + nx
                    if mask[q] and not seen[q]:
                        seen[q] = 1
                        stack.append(q)
        if len(members) >= min_size:
            ys = [m // width for m in members]
            xs = [m % width for m in members]
            found.append(Blob(tuple(members), min(xs), min(ys), max(xs), max(ys)))
    found.sort(key=lambda b: -b.size)
    return found


# ---- PNG ---------------------------------------------------------------------------------------

def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(img: Image) -> bytes:
    """Encode an RGB image as PNG (filter 0 on every row; zlib does the rest)."""
    stride = img.width * 3
    raw = b"".join(b"\x00" + img.rgb[y * stride:(y + 1) * stride] for y in range(img.height))
    header = struct.pack(">IIBBBBB", img.width, img.height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 6))
            + _chunk(b"IEND", b""))


def decode_png(data: bytes) -> Image:
    """Decode an 8-bit RGB/RGBA/grey PNG (not interlaced) to RGB."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    raw = zlib.decompress(b"".join(idat))
    stride = width * channels
    prev = bytearray(stride)
    rows: list[bytes] = []
    for y in range(height):
        base = y * (stride + 1)
        ftype = raw[base]
        line = bytearray(raw[base + 1:base + 1 + stride])
        if ftype == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif ftype == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev, strict=True))
        elif ftype == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ftype == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = prev[i]
                c = prev[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    flat = b"".join(rows)
    if channels == 3:
        rgb = flat
    elif channels == 4:
        rgb = bytearray(width * height * 3)
        rgb[0::3], rgb[1::3], rgb[2::3] = flat[0::4], flat[1::4], flat[2::4]
        rgb = bytes(rgb)
    elif channels == 1:
        rgb = bytes(v for v in flat for _ in range(3))
    else:
        rgb = bytes(v for v in flat[0::2] for _ in range(3))
    return Image(width, height, rgb)


def filmstrip(images: list[Image], *, gap: int = 2, background: tuple[int, int, int] = (40, 40, 40)) -> Image:
    """Lay images side by side (tops aligned) with a gap, for evidence PNGs."""
    if not images:
        raise ValueError("no images for a filmstrip")
    height = max(i.height for i in images)
    width = sum(i.width for i in images) + gap * (len(images) - 1)
    out = bytearray(bytes(background) * (width * height))
    x0 = 0
    for img in images:
        for y in range(img.height):
            o = (y * width + x0) * 3
            out[o:o + img.width * 3] = img.rgb[y * img.width * 3:(y + 1) * img.width * 3]
        x0 += img.width + gap
    return Image(width, height, bytes(out))
