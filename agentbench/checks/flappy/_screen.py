"""Where two captures differ, pixel by pixel, at C speed: masks as big ints, one byte lane per pixel.

Each capture is coded once: per pixel one byte holding its colour coarsely (red and green in 8
levels, blue in 4). Two codes XORed have a non-zero lane exactly where the pixels differ by more
than about an eighth of the range; a SWAR step turns that into bit 7 of the lane, so a mask is one
int and AND, OR and counting are single C operations however many pixels a capture has.
"""

from __future__ import annotations

from ..browser._imaging import Image

__all__ = ["Coder", "code_of", "mask_bytes"]

_R = bytes((v >> 5) << 5 for v in range(256))
_G = bytes((v >> 5) << 2 for v in range(256))
_B = bytes(v >> 6 for v in range(256))
_FLAG = bytes(1 if v else 0 for v in range(256))


def code_of(img: Image) -> int:
    """One lane per pixel: the pixel's coarse colour."""
    rgb = img.rgb
    return (int.from_bytes(rgb[0::3].translate(_R), "little") | int.from_bytes(rgb[1::3].translate(_G), "little")
            | int.from_bytes(rgb[2::3].translate(_B), "little"))


class Coder:
    """Masks for captures of one size (``n`` pixels): bit 7 of a lane set where the pixels differ."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.n = width, width * height
        n = self.n
        self.high = int.from_bytes(b"\x80" * n, "little")
        self.low = int.from_bytes(b"\x7f" * n, "little")

    def differ(self, a: int, b: int) -> int:
        x = a ^ b
        return (((x & self.low) + self.low) | x) & self.high

    def widen(self, mask: int, by: int) -> int:
        """The mask grown by ``by`` pixels each way (rows wrap at the edges: a pixel or two)."""
        row = 8 * self.width
        for _ in range(by):
            mask |= (mask << 8) | (mask >> 8)
            mask |= (mask << row) | (mask >> row)
        return mask & self.high

    def share(self, mask: int) -> float:
        return mask.bit_count() / max(1, self.n)

    @property
    def everything(self) -> int:
        return self.high


def mask_bytes(mask: int, n: int) -> bytes:
    """The mask as one byte per pixel, 1 where set (for ``_imaging.blobs``)."""
    return mask.to_bytes(n, "little").translate(_FLAG)
