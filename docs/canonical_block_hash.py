#!/usr/bin/env python3
"""Reference implementation of kv-router's canonical block hash in Python, standard library only.

It exists to prove the spec (docs/canonical-block-hash.md) can be implemented from the text alone,
and to produce the test vectors the Java implementation is checked against. Run it to print them.
"""
import struct

M = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, lane):
    return (_rotl((acc + lane * P2) & M, 31) * P1) & M


def _merge(acc, val):
    return (((acc ^ _round(0, val)) * P1) + P4) & M


def xxh64(data: bytes, seed: int = 0) -> int:
    n, p = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while p + 32 <= n:
            for i in range(4):
                v[i] = _round(v[i], struct.unpack_from("<Q", data, p + 8 * i)[0])
            p += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
        for x in v:
            h = _merge(h, x)
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while p + 8 <= n:
        h ^= _round(0, struct.unpack_from("<Q", data, p)[0])
        h = (_rotl(h, 27) * P1 + P4) & M
        p += 8
    if p + 4 <= n:
        h ^= (struct.unpack_from("<I", data, p)[0] * P1) & M
        h = (_rotl(h, 23) * P2 + P3) & M
        p += 4
    while p < n:
        h ^= (data[p] * P5) & M
        h = (_rotl(h, 11) * P1) & M
        p += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    h ^= h >> 32
    return h


def root(model: str, lora_name: str | None) -> int:
    return xxh64(("kvr-block-v1\0" + model + "\0" + (lora_name or "")).encode("utf-8"))


def next_chunk(parent: int, tokens: list[int], extra_keys: list[str] = ()) -> int:
    buf = struct.pack("<Q", parent) + b"".join(struct.pack("<I", t & 0xFFFFFFFF) for t in tokens)
    if extra_keys:
        buf += struct.pack("<I", len(extra_keys))
        for k in extra_keys:
            e = k.encode("utf-8")
            buf += struct.pack("<I", len(e)) + e
    return xxh64(buf)


def chain(model, lora_name, tokens, chunk_tokens, extra_keys=()):
    hashes, parent = [], root(model, lora_name)
    for k in range(len(tokens) // chunk_tokens):
        parent = next_chunk(parent, tokens[k * chunk_tokens:(k + 1) * chunk_tokens], extra_keys)
        hashes.append(parent)
    return hashes


if __name__ == "__main__":
    assert xxh64(b"") == 0xEF46DB3751D8E999 and xxh64(b"abc") == 0x44BC2CF5AD770999
    t = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    print("root('m', none)                 %016x" % root("m", None))
    c = chain("m", None, t, 4)
    print("chunk 0 of 1..9, C=4            %016x" % c[0])
    print("chunk 1 of 1..9, C=4            %016x" % c[1])
    print("chunk 0, lora 'lora-a'          %016x" % chain("m", "lora-a", t, 4)[0])
    print("chunk 0, extra key 'img:1f'     %016x" % chain("m", None, t, 4, ["img:1f"])[0])
