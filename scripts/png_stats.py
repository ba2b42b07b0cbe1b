#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Prints {"width", "height", "colors", "non_white"} of an 8-bit RGB/RGBA PNG (standard library only),
# so tests can tell a rendered page from a blank screenshot.
"""Decodes a PNG screenshot and prints simple statistics as JSON."""
import json
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG file")
    pos, idat, width = 8, b"", 0
    height = depth = color = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if depth != 8 or color not in (2, 6):
        sys.exit(f"{path}: only 8-bit RGB/RGBA PNGs are supported (depth {depth}, color {color})")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                line[x] = (line[x] + paeth(a, b, c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    width, height, bpp, rows = decode(sys.argv[1])
    colors, non_white = set(), 0
    for line in rows[::4]:
        for x in range(0, len(line), bpp * 4):
            px = bytes(line[x:x + 3])
            colors.add(px)
            non_white += px != b"\xff\xff\xff"
    samples = max(1, len(rows[::4]) * ((width + 3) // 4))
    print(json.dumps({"width": width, "height": height, "colors": len(colors),
                      "non_white": non_white / samples}))


if __name__ == "__main__":
    main()
