"""Prints small JPEGs made by Pillow and Pillow's decode of each, `Image.open(f).convert('RGB')` as timm's
loader does: the golden file worker/trainer/data/testdata/pillow_jpeg_decode.txt, which jpeg_decoder_test
compares with nmsparse's TurboJPEG decoder pixel for pixel (issue 23). One line per case:
  <name> <width> <height> <JPEG as base64> <decoded RGB, row-major HWC, as hex>
Run by tools/check_timm_goldens.sh.
"""
import base64
import io

from PIL import Image


def pattern(w, h, channels):
    # Smooth gradients plus a deterministic pseudo-random texture (an LCG), so that every DCT band is used.
    state = 12345
    out = bytearray()
    for y in range(h):
        for x in range(w):
            for c in range(channels):
                state = (state * 1103515245 + 12345) % (1 << 31)
                out.append((x * 11 + y * 7 * (c + 1) + c * 60 + (state >> 16) % 48) % 256)
    return bytes(out)


def encode(mode, w, h, **options):
    channels = {"L": 1, "RGB": 3, "CMYK": 4}[mode]
    buf = io.BytesIO()
    Image.frombytes(mode, (w, h), pattern(w, h, channels)).save(buf, "JPEG", **options)
    return buf.getvalue()


def strip_adobe_marker(jpeg):
    # Drops the APP14 "Adobe" segment: a CMYK JPEG without it (Pillow reads it as inverted all the same).
    at = jpeg.find(b"\xff\xee\x00\x0eAdobe")
    assert at > 0, "no Adobe marker"
    length = int.from_bytes(jpeg[at + 2:at + 4], "big")
    return jpeg[:at] + jpeg[at + 2 + length:]


CASES = [
    ("rgb_420_q90", encode("RGB", 24, 16, quality=90, subsampling="4:2:0")),
    ("rgb_422_q75", encode("RGB", 24, 16, quality=75, subsampling="4:2:2")),
    ("rgb_444_q95", encode("RGB", 24, 16, quality=95, subsampling="4:4:4")),
    ("rgb_420_odd_size", encode("RGB", 23, 17, quality=85, subsampling="4:2:0")),
    ("grey_q90", encode("L", 20, 12, quality=90)),
    ("cmyk_adobe_q90", encode("CMYK", 16, 16, quality=90)),
    ("cmyk_no_adobe_marker", strip_adobe_marker(encode("CMYK", 16, 16, quality=90))),
    ("rgb_420_progressive", encode("RGB", 24, 16, quality=90, subsampling="4:2:0", progressive=True)),
]

for name, jpeg in CASES:
    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    print(name, image.width, image.height, base64.b64encode(jpeg).decode(), image.tobytes().hex())
