#!/usr/bin/python3
"""Extract the uncompressed ELF vmlinux from a bzImage (like the kernel's
scripts/extract-vmlinux), so QEMU can boot it through its PVH entry point.

usage: extract-vmlinux.py BZIMAGE OUTPUT
"""
import lzma
import sys
import zlib

MAGICS = [
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x1f\x8b\x08", "gzip"),
]


def try_decompress(data, kind):
    if kind == "xz":
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data)
    return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)


def main():
    src, dst = sys.argv[1:]
    data = open(src, "rb").read()
    for magic, kind in MAGICS:
        pos = data.find(magic)
        while pos >= 0:
            try:
                out = try_decompress(data[pos:], kind)
            except (lzma.LZMAError, zlib.error, EOFError):
                out = b""
            if out[:4] == b"\x7fELF":
                open(dst, "wb").write(out)
                return 0
            pos = data.find(magic, pos + 1)
    sys.exit("extract-vmlinux: no compressed ELF kernel found in " + src)


if __name__ == "__main__":
    sys.exit(main())
