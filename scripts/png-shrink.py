#!/usr/bin/env python3
"""Rewrites a PNG smaller, losslessly, with nothing but the standard library:
usage  png-shrink.py IN.png OUT.png

Qt saves screenshots as 8-bit RGBA with zlib's default level. An opaque image loses its alpha
channel (a quarter of the bytes), each row gets the filter that leaves the smallest sum of
absolute byte values (libpng's heuristic), and the whole is compressed at level 9. Only 8-bit
RGB/RGBA, non-interlaced PNGs (what Qt writes) are rewritten; anything else is copied as is.
"""
import struct
import sys
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLOUR_CHANNELS = {2: 3, 6: 4}  # PNG colour type → bytes per pixel at 8 bits


def chunks(data):
    pos = len(SIGNATURE)
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        yield kind, data[pos + 8 : pos + 8 + length]
        pos += 12 + length


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw, width, height, bpp):
    stride = width * bpp
    rows = []
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        kind = raw[pos]
        line = bytearray(raw[pos + 1 : pos + 1 + stride])
        pos += 1 + stride
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((x + y) & 0xFF for x, y in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = prev[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, prev[i], up_left)) & 0xFF
        rows.append(line)
        prev = line
    return rows


def best_filtered(line, prev, bpp):
    """The row filtered each of the five ways; the one with the smallest sum of |signed byte|."""
    n = len(line)
    left = bytes(bpp) + bytes(line[: n - bpp])
    up_left = bytes(bpp) + bytes(prev[: n - bpp])
    candidates = [
        bytes(line),
        bytes((x - a) & 0xFF for x, a in zip(line, left)),
        bytes((x - b) & 0xFF for x, b in zip(line, prev)),
        bytes((x - ((a + b) >> 1)) & 0xFF for x, a, b in zip(line, left, prev)),
        bytes((x - paeth(a, b, c)) & 0xFF for x, a, b, c in zip(line, left, prev, up_left)),
    ]
    cost = [sum(v if v < 128 else 256 - v for v in c) for c in candidates]
    kind = cost.index(min(cost))
    return bytes([kind]) + candidates[kind]


def shrink(data):
    if not data.startswith(SIGNATURE):
        return data
    header, idat, keep = None, [], []
    for kind, body in chunks(data):
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind in (b"pHYs", b"sRGB", b"gAMA", b"cHRM"):
            keep.append((kind, body))
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in COLOUR_CHANNELS or interlace:
        return data
    bpp = COLOUR_CHANNELS[colour]
    rows = unfilter(zlib.decompress(b"".join(idat)), width, height, bpp)
    if colour == 6 and all(all(v == 255 for v in row[3::4]) for row in rows):
        rows = [bytearray(b for i, b in enumerate(row) if i % 4 != 3) for row in rows]
        colour, bpp = 2, 3
    filtered = bytearray()
    prev = bytearray(width * bpp)
    for row in rows:
        filtered += best_filtered(row, prev, bpp)
        prev = row
    out = SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0))
    for kind, body in keep:
        out += chunk(kind, body)
    out += chunk(b"IDAT", zlib.compress(bytes(filtered), 9)) + chunk(b"IEND", b"")
    return out if len(out) < len(data) else data


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: png-shrink.py IN.png OUT.png")
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    smaller = shrink(data)
    with open(sys.argv[2], "wb") as f:
        f.write(smaller)
    print(f"{sys.argv[2]}: {len(smaller)} bytes (was {len(data)})")


if __name__ == "__main__":
    main()
