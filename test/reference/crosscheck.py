"""
crosscheck.py: the Python side of test/t/014_reference.pl.

    python3 crosscheck.py INPUT.json OUTPUT.json

INPUT (written by the TAP test) holds, per key family, the keys as
PostgreSQL prints them and the filters PostgreSQL built from them; sizes
made by bloom_create; filters of generic key types; and literals to
validate.  This script parses the printed keys into Python values the way an
application would receive them, builds the same filters with bloomref,
probes PostgreSQL's filters, and writes everything to OUTPUT.  It judges
nothing itself: the TAP test compares the two sides.
"""

import binascii
import datetime
import decimal
import json
import struct
import sys
import uuid

import bloomref


def parse_value(keytype, text):
    """A key printed by PostgreSQL (DateStyle ISO, TimeZone UTC) as a value."""
    if keytype in ("smallint", "integer", "bigint"):
        return int(text)
    if keytype in ("text", "varchar", "name", "char"):
        return text
    if keytype == "bytea":
        assert text.startswith("\\x")
        return binascii.unhexlify(text[2:])
    if keytype == "uuid":
        return uuid.UUID(text)
    if keytype == "boolean":
        return {"t": True, "f": False}[text]
    if keytype in ("real", "double precision"):
        if text == "NaN":
            # any NaN is the same key: hand over one with the sign bit and a
            # payload set, not the one Python's float("NaN") gives
            return struct.unpack("<d", struct.pack("<Q", 0xFFF8000000000123))[0]
        return float(text)       # also 'Infinity', '-Infinity', '-0'
    if keytype == "numeric":
        return decimal.Decimal(text)
    if keytype == "date":
        if text in ("infinity", "-infinity"):
            return text
        return datetime.date.fromisoformat(text)
    if keytype == "timestamp":
        if text in ("infinity", "-infinity"):
            return text
        return datetime.datetime.fromisoformat(text)
    if keytype == "timestamptz":
        if text in ("infinity", "-infinity"):
            return text
        return datetime.datetime.fromisoformat(text)   # "+00" from TimeZone UTC
    if keytype == "time":
        if text == "24:00:00":
            return 24 * 3600 * 1000000          # no datetime.time for it
        return datetime.time.fromisoformat(text)
    raise ValueError("unknown key type %r" % keytype)


def pairs_of(case, texts):
    """(family, canonical bytes) of each printed key of a case."""
    if case["type"] == "enum":
        labels = [bytes.fromhex(h).decode("utf-8") for h in case["labels"]]
        family = bloomref.enum_family(case["schema"], case["typename"], labels)
        return [bloomref.enum_canonical(t, family) for t in texts]
    return [bloomref.canonical(parse_value(case["type"], t), case["type"])
            for t in texts]


def check_case(case):
    keys = [bytes.fromhex(h).decode("utf-8") for h in case["keys"]]
    absent = [bytes.fromhex(h).decode("utf-8") for h in case["absent"]]
    key_pairs = pairs_of(case, keys)
    probe_pairs = key_pairs + pairs_of(case, absent)
    family = key_pairs[0][0] if key_pairs else None

    mine = {
        "agg": bloomref.BloomFilter.from_keys(key_pairs, family=family),
        "sized": bloomref.BloomFilter.from_keys(
            key_pairs, capacity=case["capacity"], rate=case["rate"],
            family=family),
    }
    # bloom_create followed by one add per key, in order
    fold = bloomref.BloomFilter.create(case["capacity"], case["rate"])
    for fam, b in key_pairs:
        fold.add_canonical(fam, b)
    mine["fold"] = fold

    out = {"filters": {}, "probe_pg": {}, "family": family}
    for kind, f in mine.items():
        out["filters"][kind] = f.to_base64()
    for kind, text in case["filters"].items():
        theirs = bloomref.BloomFilter.from_base64(text)
        out["probe_pg"][kind] = [theirs.contains_canonical(fam, b)
                                 for fam, b in probe_pairs]
    return out


def validity(text):
    try:
        bloomref.BloomFilter.from_base64(text)
        return "valid"
    except bloomref.FormatError:
        return "invalid"


def generic(text, probe_family):
    """A filter of a type hashed by PostgreSQL itself: read, never probed."""
    f = bloomref.BloomFilter.from_base64(text)
    try:
        f.contains_canonical(probe_family, b"x")
        refused = False
    except bloomref.NotReproducible:
        refused = True
    return {"family": f.family, "refused": refused}


def guarded(fn, *args):
    """fn's result, or the error it raised (so one case fails, not all)."""
    try:
        return fn(*args)
    except Exception as e:
        return {"error": "%s: %s" % (type(e).__name__, e)}


def main(inpath, outpath):
    with open(inpath, encoding="utf-8") as fh:
        spec = json.load(fh)
    result = {
        "cases": {c["name"]: guarded(check_case, c) for c in spec["cases"]},
        "sizes": [bloomref.BloomFilter.create(s["capacity"], s["rate"]).to_base64()
                  for s in spec["sizes"]],
        "validity": [validity(t) for t in spec["literals"]],
        "generic": [guarded(generic, g["filter"], g["family"])
                    for g in spec["generic"]],
    }
    with open(outpath, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
