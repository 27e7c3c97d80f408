"""ImageDecoder (ONNX spec: ImageDecoder-20).

"Loads and decodes and image from a file. If it can't decode for any reason (e.g. corrupted
encoded stream, invalid format, it will return an empty matrix). The following image formats are
supported: BMP, JPEG (note: Lossless JPEG support is optional), JPEG2000, TIFF, PNG, WebP,
Portable image format (PBM, PGM, PPM, PXM, PNM). Decoded images follow a channel-last layout:
(Height, Width, Channels)." ``pixel_format`` "RGB" (default), "BGR" or "Grayscale": 3, 3 and 1
channels of uint8. The input is the encoded file's bytes, a 1-D uint8 tensor.

The reference decodes with Pillow (a dependency of the harness: pyproject.toml), the cases are
real files encoded by Pillow when the case is built. Lossless formats must decode to the pixels
that were encoded, exactly: the reference checks that it got them back and raises otherwise (our
decoder must not be the oracle's blind spot). The lossy formats are JPEG (the named edges
``jpeg_*``): its decoded pixels are not fixed by ISO/IEC 10918-1 (the inverse DCT need only meet
an accuracy bound), so every pixel of a JPEG file is a spec-silent point (``jpeg_pixels``) whose
invariant admits 3 units (the reasoning is at the point). Not a tolerance in
harness/data/tolerances.toml: the comparator holds integer outputs exact whatever the tolerance
(tests/test_compare.py), and a decoder's uint8 pixels are integers. The spec's
own rule for JPEG chroma upsampling ("fancy" upsampling, libjpeg-turbo's default) is what Pillow's
libjpeg does.

"an empty matrix": we return shape (0, 0, channels) of the requested pixel format (a rank-3
image with no pixels). The text gives no shape, so this is a choice, but not yet a spec-silent
point: the comparator re-judges value mismatches at such points, not shapes, so a runtime that
returns another empty shape reads as wrong-shape.

Spec-silent point ``grayscale_of_color``: the text does not say how a colour image becomes
"Grayscale"; we take ITU-R BT.601 luma, L = R 299/1000 + G 587/1000 + B 114/1000 (Pillow's
convert("L"), OpenCV's cvtColor): every output element is open, invariant: within 1 of that luma.
A grayscale file decoded as RGB or BGR repeats its value in the three channels; a palette
image is expanded by its palette; a 1-bit PBM's pixels are 0 or 255. Files with an alpha channel
or more than 8 bits per sample are left out: the text does not say whether alpha is composited
or dropped, nor how 16-bit samples become 8-bit.

"PXM" is not a file format of its own (OpenCV's name for reading any of PBM/PGM/PPM), and "PNM"
names that family, so PBM, PGM and PPM cover the list.
"""

from __future__ import annotations

import io

import numpy as np

from harness import strategies as S
from harness.registry import Example, Operator

op = Operator("ImageDecoder")
st = S.st

#: Pillow format name, save options, Pillow mode of the image, lossless
FORMATS = {
    "bmp": ("BMP", {}, "RGB", True),
    "bmp_gray": ("BMP", {}, "L", True),
    "png": ("PNG", {}, "RGB", True),
    "png_gray": ("PNG", {}, "L", True),
    "png_palette": ("PNG", {}, "P", True),
    "tiff": ("TIFF", {}, "RGB", True),
    "tiff_lzw": ("TIFF", {"compression": "tiff_lzw"}, "RGB", True),
    "tiff_gray": ("TIFF", {}, "L", True),
    "webp_lossless": ("WEBP", {"lossless": True}, "RGB", True),
    "jpeg2000": ("JPEG2000", {"irreversible": False}, "RGB", True),
    "jpeg2000_gray": ("JPEG2000", {"irreversible": False}, "L", True),
    "ppm": ("PPM", {}, "RGB", True),
    "pgm": ("PPM", {}, "L", True),
    "pbm": ("PPM", {}, "1", True),
    "jpeg": ("JPEG", {"quality": 90, "subsampling": 2}, "RGB", False),
    "jpeg_444": ("JPEG", {"quality": 95, "subsampling": 0}, "RGB", False),
    "jpeg_gray": ("JPEG", {"quality": 90}, "L", False),
}
LOSSLESS = tuple(k for k, v in FORMATS.items() if v[3])
#: the drawn cases: colour files of every lossless format; grayscale, palette and 1-bit files are
#: named edges (``*_gray_*``, ``png_palette_*``, ``pbm_*``: onnx.reference returns them undecoded)
DRAWN = tuple(k for k in LOSSLESS if FORMATS[k][2] == "RGB")


def _pil():
    from PIL import Image  # a dependency of the harness; imported here so that `import harness` stays light

    return Image


def encode(pixels: np.ndarray, fmt: str) -> np.ndarray:
    """The file of ``pixels`` (H x W x 3 RGB, or H x W for one channel) in format ``fmt``, as the
    1-D uint8 tensor ImageDecoder takes."""
    Image = _pil()
    name, options, mode, _ = FORMATS[fmt]
    if mode == "RGB":
        img = Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8), "RGB")
    elif mode == "L":
        img = Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8), "L")
    elif mode == "1":
        img = Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8), "L").point(lambda v: 255 if v >= 128 else 0).convert("1")
    else:  # "P": a palette of the distinct colours
        img = Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8), "RGB").convert("P", palette=Image.Palette.ADAPTIVE, colors=256)
    buf = io.BytesIO()
    img.save(buf, format=name, **options)
    return np.frombuffer(buf.getvalue(), dtype=np.uint8).copy()


def _empty(pixel_format: str) -> np.ndarray:
    return np.zeros((0, 0, 1 if pixel_format == "Grayscale" else 3), dtype=np.uint8)


def decode_rgb(stream: np.ndarray):
    """(RGB pixels H x W x 3, whether the file holds colour) or None when it cannot be decoded."""
    Image = _pil()
    data = np.asarray(stream, dtype=np.uint8).tobytes()
    img = None
    try:  # only the decoding: Pillow's format plugins raise many kinds of errors on a corrupt file
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception:  # noqa: BLE001 - "If it can't decode for any reason ... it will return an empty matrix"
        if img is not None:
            img.close()
        return None
    with img:  # decoded: what follows is ours, and a failure of it is a bug that surfaces
        colour = img.mode not in ("L", "1", "I;16", "I", "F", "LA")
        if img.mode == "P":
            pal = np.asarray(img.convert("RGB"))
            colour = not (np.all(pal[..., 0] == pal[..., 1]) and np.all(pal[..., 1] == pal[..., 2]))
        rgb = np.asarray(img.convert("RGB"), dtype=np.uint8)
        gray = np.asarray(img.convert("L"), dtype=np.uint8) if not colour else None
    return rgb, colour, gray


def luma601(rgb: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 luma, L = R 299/1000 + G 587/1000 + B 114/1000, rounded to nearest."""
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    return ((r * 299 + g * 587 + b * 114 + 500) // 1000).astype(np.uint8)


@op.reference(20)
def image_decoder(encoded_stream, *, pixel_format="RGB"):
    fmt = pixel_format.decode() if isinstance(pixel_format, bytes) else str(pixel_format)
    if fmt not in ("RGB", "BGR", "Grayscale"):
        raise ValueError(f"pixel_format {fmt!r} is not RGB, BGR or Grayscale")
    got = decode_rgb(encoded_stream)
    if got is None:
        return _empty(fmt)
    rgb, colour, gray = got
    if fmt == "RGB":
        return rgb
    if fmt == "BGR":
        return np.ascontiguousarray(rgb[..., ::-1])
    return (gray if gray is not None else luma601(rgb))[..., None]


def _gray_where(inputs, attrs, expected, since):
    fmt = attrs.get("pixel_format", "RGB")
    fmt = fmt.decode() if isinstance(fmt, bytes) else fmt
    if fmt != "Grayscale" or np.size(expected[0]) == 0:
        return [None]
    got = decode_rgb(inputs[0])
    return [None if got is None or not got[1] else np.ones(np.shape(expected[0]), dtype=bool)]


def _near_luma(c):
    rgb = decode_rgb(c.inputs[0])[0]
    a = np.asarray(c.actual[0]).astype(np.int64)
    return a.shape == (rgb.shape[0], rgb.shape[1], 1) and bool((np.abs(a[..., 0] - luma601(rgb).astype(np.int64)) <= 1).all())


op.spec_silent(
    "grayscale_of_color", (20,),
    spec="Decoded images follow a channel-last layout: (Height, Width, Channels).",
    expected="ITU-R BT.601 luma, L = R 299/1000 + G 587/1000 + B 114/1000 (Pillow's convert('L'), OpenCV's cvtColor "
             "RGB2GRAY); pixel_format 'Can be one of \"RGB\", \"BGR\", or \"Grayscale\"' names no conversion from colour",
    where=_gray_where,
    invariants={"each pixel is within 1 of the BT.601 luma of the colour pixel": _near_luma},
    readings={"OpenCV's cvtColor RGB2GRAY: (4899 R + 9617 G + 1868 B + 2^13) >> 14": lambda c: [_luma_fixed(c, (4899, 9617, 1868), 14)],
              "Pillow's convert('L'): (19595 R + 38470 G + 7471 B + 2^15) >> 16": lambda c: [_luma_fixed(c, (19595, 38470, 7471), 16)]})


def _luma_fixed(c, weights, shift: int) -> np.ndarray:
    """BT.601 luma in a decoder's fixed-point arithmetic, rounded by adding half before the shift."""
    rgb = decode_rgb(c.inputs[0])[0].astype(np.int64)
    luma = (rgb[..., 0] * weights[0] + rgb[..., 1] * weights[1] + rgb[..., 2] * weights[2] + (1 << (shift - 1))) >> shift
    return np.clip(luma, 0, 255).astype(np.asarray(c.expected[0]).dtype).reshape(np.shape(c.expected[0]))


def _is_jpeg(stream) -> bool:
    head = np.asarray(stream, dtype=np.uint8)[:3].tobytes()
    return head == b"\xff\xd8\xff"  # the SOI marker and the next marker's 0xFF (ITU-T T.81 B.1.1.3)


def _jpeg_where(inputs, attrs, expected, since):
    if not _is_jpeg(inputs[0]) or np.size(expected[0]) == 0:
        return [None]
    return [np.ones(np.shape(expected[0]), dtype=bool)]


def _within_three(c):
    e = np.asarray(c.expected[0]).astype(np.int64)
    a = np.asarray(c.actual[0])
    return a.shape == e.shape and bool((np.abs(a.astype(np.int64) - e) <= 3).all())


# no reading computes a decoder's pixels: ITU-T T.81 bounds the inverse DCT's error instead of naming one computation
# (unchecked: the invariant only)
JPEG_POINT = op.spec_silent(
    "jpeg_pixels", (20,),
    spec="JPEG (note: Lossless JPEG support is optional)",
    expected="the pixels libjpeg (Pillow) decodes, with the spec's fancy chroma upsampling. ISO/IEC 10918-1 (ITU-T T.81) "
             "Annex A bounds the inverse DCT's accuracy (IEEE 1180: a peak error of 1 per sample) instead of naming one "
             "computation, and decoders (libjpeg, libjpeg-turbo's SIMD paths, OpenCV) differ within it: one unit in Y "
             "plus one in Cb or Cr becomes up to 1 + 1.772 in B after the YCbCr to RGB conversion, 3 after rounding",
    where=_jpeg_where,
    invariants={"every pixel is within 3 of libjpeg's": _within_three})


# -- strategy and edges ----------------------------------------------------------------------
def _pixels(rng_or_draw, h, w, mode):
    """H x W x 3 (RGB, P) or H x W (L, 1) pixels."""
    shape = (h, w, 3) if mode in ("RGB", "P") else (h, w)
    return rng_or_draw(shape)


def _checked(pixels, fmt, stream):
    """The lossless formats must give the pixels back (a decoder that does not is no oracle)."""
    name, _, mode, lossless = FORMATS[fmt]
    if not lossless:
        return stream
    got = decode_rgb(stream)
    want = pixels if mode in ("RGB", "P") else np.repeat(pixels[..., None], 3, axis=-1)
    if mode == "1":
        want = np.where(want >= 128, 255, 0).astype(np.uint8)
    if got is None or not np.array_equal(got[0], want):
        raise AssertionError(f"Pillow does not decode its own {fmt} file of {pixels.shape} back to its pixels")
    return stream


def _example(pixels, fmt, pixel_format, name=""):
    stream = _checked(pixels, fmt, encode(pixels, fmt))
    attrs = {} if pixel_format is None else {"pixel_format": pixel_format}
    return Example([stream], attrs, name=name)


@op.strategy(20)
def draw(d, dtype, opset):
    fmt = d(st.sampled_from(DRAWN))
    mode = FORMATS[fmt][2]
    h, w = d(st.integers(1, 6)), d(st.integers(1, 6))
    if mode == "P":  # a few colours, so the palette holds each exactly
        colours = np.array(d(st.lists(st.tuples(*[st.integers(0, 255)] * 3), min_size=1, max_size=4)), dtype=np.uint8)
        pixels = colours[np.array(d(st.lists(st.integers(0, len(colours) - 1), min_size=h * w, max_size=h * w)))].reshape(h, w, 3)
    else:
        n = h * w * (3 if mode == "RGB" else 1)
        pixels = np.array(d(st.lists(st.integers(0, 255), min_size=n, max_size=n)), dtype=np.uint8)
        pixels = pixels.reshape((h, w, 3) if mode == "RGB" else (h, w))
    pixel_format = d(st.sampled_from([None, "RGB", "BGR", "Grayscale"]))
    return _example(pixels, fmt, pixel_format)


def _gradient(h, w, mode):
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), ((x + y) * 37) % 256], -1).astype(np.uint8)
    return rgb if mode in ("RGB", "P") else rgb[..., 0]


@op.edges(20)
def edges(dtype, opset):
    out = []
    for fmt, (_, _, mode, lossless) in FORMATS.items():
        h, w = (8, 8) if not lossless else (5, 7)
        pixels = _gradient(h, w, mode)
        if mode == "P":
            pixels = np.array([[255, 0, 0], [0, 128, 255], [7, 7, 7]], dtype=np.uint8)[(np.arange(h * w) % 3)].reshape(h, w, 3)
        for pf in ("RGB", "BGR", "Grayscale"):
            out.append(_example(pixels, fmt, pf, name=f"{fmt}_{pf.lower()}"))
    out.append(_example(_gradient(5, 7, "RGB"), "png", None, name="png_default_rgb"))
    # a smooth JPEG 4:2:0 image: its chroma is upsampled by the spec's "fancy" rule
    out.append(_example(_gradient(16, 16, "RGB"), "jpeg", "RGB", name="jpeg_chroma_upsampling_16x16"))
    out.append(_example(np.full((1, 1, 3), 200, np.uint8), "png", "RGB", name="png_1x1"))
    png = encode(_gradient(5, 7, "RGB"), "png")
    out.append(Example([png[: len(png) // 2]], {"pixel_format": "RGB"}, name="invalid_truncated_png"))
    out.append(Example([np.frombuffer(b"not an image at all", dtype=np.uint8).copy()], {"pixel_format": "BGR"}, name="invalid_bytes"))
    out.append(Example([np.zeros(0, dtype=np.uint8)], {"pixel_format": "Grayscale"}, name="invalid_empty_stream"))
    return out
