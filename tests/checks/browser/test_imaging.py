"""Pure unit tests of the numpy-free image code and the refresh-rate analysis (no browser)."""

from __future__ import annotations

import struct
import zlib

import pytest

from agentbench.checks.browser._frames import Frame
from agentbench.checks.browser._imaging import (
    Image,
    blobs,
    decode_png,
    diff_mask,
    encode_png,
    filmstrip,
    thermo,
    thermo_distance,
)
from agentbench.checks.browser._refresh import InputStep, Runs, fit_rate, judge, theil_sen


def _gradient(w: int = 13, h: int = 7) -> Image:
    return Image(w, h, bytes((x * 19 + y * 7 + c * 50) % 256 for y in range(h) for x in range(w) for c in range(3)))


def test_png_round_trip() -> None:
    img = _gradient()
    back = decode_png(encode_png(img))
    assert back == img


def _png_with_filters(img: Image) -> bytes:
    """Encode with every PNG filter type (1-4 in turn) the way other encoders do."""
    stride = img.width * 3
    rows, prev = [], bytes(stride)
    for y in range(img.height):
        line = img.rgb[y * stride:(y + 1) * stride]
        ftype = y % 5
        out = bytearray()
        for i, v in enumerate(line):
            a = line[i - 3] if i >= 3 else 0
            b = prev[i]
            c = prev[i - 3] if i >= 3 else 0
            if ftype == 0:
                pred = 0
            elif ftype == 1:
                pred = a
            elif ftype == 2:
                pred = b
            elif ftype == 3:
                pred = (a + b) >> 1
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out.append((v - pred) & 255)
        rows.append(bytes([ftype]) + bytes(out))
        prev = line

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", img.width, img.height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows)))
            + chunk(b"IEND", b""))


def test_png_decoder_undoes_every_filter() -> None:
    img = _gradient(17, 10)
    assert decode_png(_png_with_filters(img)) == img


def test_decode_rejects_non_png() -> None:
    with pytest.raises(ValueError):
        decode_png(b"GIF89a....")


def test_thermometer_distance_is_quantised_l1() -> None:
    a = Image(2, 1, bytes([0, 0, 0, 255, 255, 255]))
    b = Image(2, 1, bytes([64, 0, 0, 255, 255, 255]))
    # 64 quantises to 2 steps (of 32), over 2 pixels * 3 channels
    assert thermo_distance(thermo(a), thermo(b), 2) == pytest.approx(2 / 6)
    assert thermo_distance(thermo(a), thermo(a), 2) == 0


def test_diff_mask_and_blobs() -> None:
    w, h = 10, 8
    base = bytearray(b"\x10\x20\x30" * (w * h))
    other = bytearray(base)
    for x, y in [(1, 1), (2, 1), (1, 2), (7, 6)]:
        i = (y * w + x) * 3
        other[i:i + 3] = b"\xff\xff\x00"
    mask = diff_mask(Image(w, h, bytes(base)), Image(w, h, bytes(other)))
    assert sum(mask) == 4
    found = blobs(mask, w, h)
    assert [b.size for b in found] == [3, 1]
    assert (found[0].x0, found[0].y0, found[0].x1, found[0].y1) == (1, 1, 2, 2)


def test_filmstrip_places_images_side_by_side() -> None:
    red, blue = Image(2, 2, b"\xff\x00\x00" * 4), Image(3, 1, b"\x00\x00\xff" * 3)
    strip = filmstrip([red, blue], gap=1)
    assert (strip.width, strip.height) == (6, 2)
    assert strip.pixel(0, 1) == (255, 0, 0) and strip.pixel(3, 0) == (0, 0, 255)
    assert strip.pixel(2, 0) == (40, 40, 40)  # the gap


def test_theil_sen_ignores_outliers() -> None:
    pts = [(t / 10, 4 * t / 10 + 0.5) for t in range(20)] + [(0.3, 9.0), (1.1, -3.0)]
    s, b = theil_sen(pts)
    assert s == pytest.approx(4.0, abs=0.05) and b == pytest.approx(0.5, abs=0.05)


def _square_frames(times: list[float], pos) -> list[Frame]:
    """A 40x20 scene with a white square at x = pos(t) on a dark ground."""
    out = []
    for t in times:
        px = bytearray(b"\x20\x20\x20" * 800)
        x0 = int(pos(t)) % 36
        for y in range(8, 12):
            for x in range(x0, x0 + 4):
                px[(y * 40 + x) * 3:(y * 40 + x) * 3 + 3] = b"\xff\xff\xff"
        out.append(Frame(t_ms=t * 1000, image=Image(40, 20, bytes(px))))
    return out


@pytest.mark.parametrize("factor", [1.0, 4.0])
def test_fit_recovers_the_speed_factor(factor: float) -> None:
    speed = 4.0  # px per virtual second at 60 Hz
    t60 = [k / 30 for k in range(270)]
    t240 = [k / 120 for k in range(240)]
    f60 = _square_frames(t60, lambda t: speed * t)
    f240 = _square_frames(t240, lambda t: speed * factor * t)
    fit = judge(Runs(f60, f240), [])
    assert fit["ok"], fit
    assert float(fit["s"]) == pytest.approx(factor, rel=0.1)


def test_static_scene_cannot_be_judged() -> None:
    f = _square_frames([k / 30 for k in range(40)], lambda t: 5)
    fit = fit_rate(Runs(f, f))
    assert not fit["ok"] and fit.get("static")


def test_input_step_is_plain_data() -> None:
    assert InputStep(0.5, "press:Space").t == 0.5
