"""
bloomref: a reference implementation of the bloomfilter format, in Python.

Written from the format's description (the comment at the top of src/bloom.h)
and the key canonicalisation (README.md, "Hashing", with src/bloom_keys.c for
the exact details), not translated from the C that reads and writes filters.
test/t/014_reference.pl checks that this module and the extension produce
byte-identical filters for every key family and that each answers the same on
the other's filters.

It is also meant to be embedded: an application can read a filter that
PostgreSQL wrote (its text form is base64, its binary form the bytes),
probe it, or build a filter itself and hand it to PostgreSQL.

    import bloomref
    f = bloomref.BloomFilter.from_base64(text_from_postgres)
    f.contains(42, "bigint")                      # True or False
    g = bloomref.BloomFilter.create(1000, 0.01)   # as bloom_create(1000, 0.01)
    g.add("hello", "text")
    g.to_base64()                                 # '...'::bloom in SQL

Needs Python 3 and the xxhash module (Debian: python3-xxhash).
"""

import base64
import datetime
import decimal
import itertools
import math
import struct
import uuid

import xxhash

# ---------------------------------------------------------------------------
# The format (src/bloom.h, "On-disk format, version 1")
#
# A filter is a 124-byte header followed by nblocks blocks of 64 bytes.  All
# multi-byte fields are little-endian.  (Inside PostgreSQL the value also has
# the usual 4-byte varlena length in front; the binary form, bloom::bytea and
# the text form carry only the bytes described here.)
#
#   offset size  field
#        0    4  magic      b"BLMF"
#        4    1  version    1
#        5    1  layout     1 (blocks of 512 bits)
#        6    1  hash       1 (XXH3-64 of the key's canonical bytes)
#        7    1  nhashes    k, bits set per key, 1..32
#        8    8  seed       XXH3 seed (0 in every filter made today)
#       16    8  nblocks    number of 64-byte blocks, 1..12,500,000
#       24    8  capacity   design number of keys (informational), >= 1
#       32    8  rate       design false-positive rate, an IEEE double
#       40    4  flags      must be 0
#       44   64  family     key family, UTF-8, NUL-padded; all zero while the
#                           filter has no key
#      108    4  nlabels    an enum family's label guard (see label_guard),
#      112    8  labelsum   else 0; no labels means a sum of 0
#      120    4  reserved   must be 0
#      124    -  bits       nblocks * 64 bytes
# ---------------------------------------------------------------------------

MAGIC = b"BLMF"
VERSION = 1
LAYOUT_BLOCK512 = 1
HASH_XXH3 = 1

HEADER_SIZE = 124
BLOCK_BYTES = 64
BLOCK_BITS = 512
FAMILY_LEN = 64          # including the terminating NUL
ENUM_PREFIX = "enum:"    # starts every enum family
MAX_K = 32
MAX_NBLOCKS = 12500000   # 800,000,000 bytes of bits

DEFAULT_RATE = 0.01
DEFAULT_SEED = 0

INT64_MAX = 2**63 - 1
MASK64 = 2**64 - 1

# the constants of the bit layout (bloom.h, "Bit layout")
GOLDEN = 0x9E3779B97F4A7C15


class FormatError(ValueError):
    """The bytes or text are not a valid bloom filter."""


class FamilyError(ValueError):
    """A key's family differs from the family of the filter's keys."""


class LabelsError(ValueError):
    """
    The labels of an enum type now are not those the filter's keys were
    hashed under plus some added since: a label was renamed, and its keys
    would not be found under the new name.
    """


class NotReproducible(ValueError):
    """
    The filter's keys are hashed with PostgreSQL's own extended hash function
    of their type (the families named "<type>/pg<major>"): that hash is
    defined only inside one PostgreSQL major version, so no code outside
    PostgreSQL can add or probe such keys.
    """


# ---------------------------------------------------------------------------
# Bit layout
# ---------------------------------------------------------------------------

def mix(z):
    """splitmix64's finaliser, on 64-bit unsigned integers."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def block_of(h, nblocks):
    """The block of a 64-bit hash: a multiply-shift of its high 32 bits."""
    return ((h >> 32) * nblocks) >> 32


def bit_positions(h, k):
    """
    The k bit numbers (0..511) of hash h inside its block.  Word t of the
    splitmix64 stream seeded with h is mix(h + (t+1) * GOLDEN); bit i comes
    from word i // 7, 9 bits at a time from the bottom.
    """
    positions = []
    for i in range(k):
        t = i // 7
        word = mix((h + (t + 1) * GOLDEN) & MASK64)
        positions.append((word >> (9 * (i % 7))) & 511)
    return positions


# ---------------------------------------------------------------------------
# Key canonicalisation (README.md, "Hashing")
#
# Each key becomes canonical bytes, the bytes are hashed with XXH3-64 seeded
# with the filter's seed, and the hash picks the block and bits.  Values that
# are equal under the type's "=" get the same bytes.  The family is recorded
# in the filter; keys of another family are refused.
# ---------------------------------------------------------------------------

# key type name -> family.  Enums are handled separately (their family is
# "enum:" and the qualified type name).  A domain is hashed as its base type: pass the base
# type's name.
FAMILIES = {
    "smallint": "integer", "int2": "integer",
    "integer": "integer", "int": "integer", "int4": "integer",
    "bigint": "integer", "int8": "integer",
    "text": "text", "varchar": "text", "character varying": "text",
    "name": "text",
    "char": "text", "character": "text", "bpchar": "text",
    "bytea": "bytea",
    "uuid": "uuid",
    "boolean": "boolean", "bool": "boolean",
    "real": "float", "float4": "float",
    "double precision": "float", "float8": "float",
    "numeric": "numeric", "decimal": "numeric",
    "date": "date",
    "timestamp": "timestamp", "timestamp without time zone": "timestamp",
    "timestamptz": "timestamptz", "timestamp with time zone": "timestamptz",
    "time": "time", "time without time zone": "time",
}

# PostgreSQL's special values of the date and time types
DATE_NEG_INFINITY = -2**31          # '-infinity'::date
DATE_POS_INFINITY = 2**31 - 1       # 'infinity'::date
TIMESTAMP_NEG_INFINITY = -2**63     # '-infinity'::timestamp(tz)
TIMESTAMP_POS_INFINITY = 2**63 - 1  # 'infinity'::timestamp(tz)

PG_EPOCH_DATE = datetime.date(2000, 1, 1)
PG_EPOCH = datetime.datetime(2000, 1, 1)
PG_EPOCH_UTC = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
ONE_MICROSECOND = datetime.timedelta(microseconds=1)


def int64_le(v):
    """A signed 64-bit integer as 8 little-endian bytes (two's complement)."""
    if not -2**63 <= v <= INT64_MAX:
        raise ValueError("integer key %r is out of the 64-bit range" % (v,))
    return struct.pack("<q", v)


def int32_le(v):
    if not -2**31 <= v < 2**31:
        raise ValueError("key %r is out of the 32-bit range" % (v,))
    return struct.pack("<i", v)


def text_bytes(value, encoding):
    if isinstance(value, str):
        return value.encode(encoding)
    return bytes(value)


def float_bytes(value, single):
    """
    A real or double precision key: the value as a little-endian IEEE double.
    A real is first rounded to single precision, as PostgreSQL stores it, and
    then widened (exactly) to double.  -0 is hashed as +0, and every NaN as
    the one NaN 0x7ff8000000000000, since "=" has them equal.
    """
    d = float(value)
    if single:
        d = struct.unpack("<f", struct.pack("<f", d))[0]
    if math.isnan(d):
        return struct.pack("<Q", 0x7FF8000000000000)
    if d == 0.0:
        d = 0.0
    return struct.pack("<d", d)


def numeric_text(value):
    """
    A numeric key: the value printed in plain decimal notation with the
    trailing zeros of its fraction removed (and the decimal point, if nothing
    is left after it), so 1.0 and 1.00 are one key.  NaN is "NaN", the
    infinities "Infinity" and "-Infinity"; zero has no sign.
    """
    d = decimal.Decimal(value)
    if d.is_nan():
        return "NaN"
    if d.is_infinite():
        return "-Infinity" if d < 0 else "Infinity"
    if d == 0:
        d = abs(d)
    s = format(d, "f")          # plain notation, never an exponent
    if "." in s:
        s = s.rstrip("0")
        if s.endswith("."):
            s = s[:-1]
    return s


def date_days(value):
    """days since 2000-01-01; an int is taken as that count already."""
    if isinstance(value, str):
        if value == "infinity":
            return DATE_POS_INFINITY
        if value == "-infinity":
            return DATE_NEG_INFINITY
        raise ValueError("date key %r: pass a datetime.date" % (value,))
    if isinstance(value, int):
        return value
    if isinstance(value, datetime.datetime):
        raise ValueError("date key %r is a datetime" % (value,))
    return (value - PG_EPOCH_DATE).days


def timestamp_micros(value, with_zone):
    """
    microseconds since 2000-01-01 00:00:00 (for timestamptz, in UTC); an
    int is taken as that count already.
    """
    if isinstance(value, str):
        if value == "infinity":
            return TIMESTAMP_POS_INFINITY
        if value == "-infinity":
            return TIMESTAMP_NEG_INFINITY
        raise ValueError("timestamp key %r: pass a datetime.datetime" % (value,))
    if isinstance(value, int):
        return value
    if with_zone:
        if value.tzinfo is None:
            raise ValueError("timestamptz key %r has no time zone" % (value,))
        return (value - PG_EPOCH_UTC) // ONE_MICROSECOND
    if value.tzinfo is not None:
        raise ValueError("timestamp key %r has a time zone" % (value,))
    return (value - PG_EPOCH) // ONE_MICROSECOND


def time_micros(value):
    """
    microseconds since midnight; an int is taken as that count already (the
    only way to say '24:00:00', which PostgreSQL accepts and Python not).
    """
    if isinstance(value, int):
        return value
    return (((value.hour * 60) + value.minute) * 60 + value.second) * 1000000 \
        + value.microsecond


def canonical(value, keytype, encoding="utf-8"):
    """
    The family and canonical bytes of a key of the named PostgreSQL type.

    For text types a str is encoded in the database's encoding (UTF-8 unless
    told otherwise); bytes are taken as they are.  A name key must be what
    PostgreSQL stores, i.e. at most 63 bytes.  For enums use enum_canonical.
    """
    family = FAMILIES.get(keytype)
    if family is None:
        raise ValueError("no canonical bytes for key type %r" % (keytype,))

    if family == "integer":
        # smallint, integer and bigint all as a 64-bit integer: 42, 42::int2
        # and 42::int8 are one key
        return family, int64_le(int(value))
    if family == "text":
        b = text_bytes(value, encoding)
        if keytype in ("char", "character", "bpchar"):
            # char(n) compares without trailing blanks
            b = b.rstrip(b" ")
        return family, b
    if family == "bytea":
        return family, bytes(value)
    if family == "uuid":
        # the 16 bytes in the order they are written, as uuid.UUID.bytes
        return family, uuid.UUID(str(value)).bytes
    if family == "boolean":
        return family, b"\x01" if value else b"\x00"
    if family == "float":
        return family, float_bytes(value, keytype in ("real", "float4"))
    if family == "numeric":
        return family, numeric_text(value).encode("ascii")
    if family == "date":
        return family, int32_le(date_days(value))
    if family in ("timestamp", "timestamptz"):
        return family, int64_le(timestamp_micros(value, family == "timestamptz"))
    if family == "time":
        return family, int64_le(time_micros(value))
    raise AssertionError(family)


def quote_ident(name):
    """
    An identifier as PostgreSQL's quote_ident writes it: bare if it is
    lower-case letters, digits and underscores not starting with a digit,
    else in double quotes.  (PostgreSQL also quotes SQL keywords; this does
    not know the keyword list, so pass such a name already quoted.)
    """
    plain = name != "" and (name[0].islower() or name[0] == "_") and all(
        (c.islower() and c.isascii()) or c.isdigit() or c == "_" for c in name)
    if plain:
        return name
    return '"' + name.replace('"', '""') + '"'


def label_guard(labels):
    """
    The label guard of an enum's labels, as a filter records it: (their
    number, the sum modulo 2^64 of XXH3-64 (seed 0) of each in UTF-8).  It
    does not depend on the labels' order.
    """
    total = sum(xxhash.xxh3_64_intdigest(l.encode("utf-8"), seed=0)
                for l in labels)
    return (len(labels), total & MASK64)


def labels_contain(guard, labels):
    """
    Is guard that of some of these labels (the type's labels now, less some
    added since)?  Exhaustive over the choices of the labels added (or of
    those kept, if fewer), so slow for large types; the extension meets in
    the middle and gives up past a bound.
    """
    n, total = guard
    m = len(labels)
    if n > m:
        return False
    hashes = [xxhash.xxh3_64_intdigest(l.encode("utf-8"), seed=0)
              for l in labels]
    k = min(m - n, n)
    target = (label_guard(labels)[1] - total) & MASK64 if k == m - n else total
    return any(sum(c) & MASK64 == target
               for c in itertools.combinations(hashes, k))


class EnumFamily(str):
    """
    The family of an enum's keys, "enum:" and the schema-qualified type name,
    knowing the type's labels now (.labels, .guard).  Adding a label does not
    change the family; the labels are what a filter's label guard is checked
    against.
    """

    def __new__(cls, name, labels):
        self = str.__new__(cls, name)
        self.labels = list(labels)
        self.guard = label_guard(self.labels)
        return self


def enum_family(schema, typename, labels):
    """The family of the keys of enum type schema.typename, whose labels
    (now) are labels."""
    return EnumFamily("%s%s.%s" % (ENUM_PREFIX, quote_ident(schema),
                                   quote_ident(typename)), labels)


def enum_canonical(label, family, encoding="utf-8"):
    """An enum key: its label (not its OID, which dump and restore change)."""
    return family, text_bytes(label, encoding)


def key_hash(canonical_bytes, seed=DEFAULT_SEED):
    """The 64-bit hash of a key's canonical bytes."""
    return xxhash.xxh3_64_intdigest(canonical_bytes, seed=seed)


# ---------------------------------------------------------------------------
# Sizing (bloom_create and bloom_agg; src/bloom.c, bloom_plan)
#
# The number of blocks and k are chosen by the exact expected false-positive
# rate of a blocked filter: keys fall into blocks as a Poisson process, and a
# block holding i keys answers a probe of an absent key "yes" with
# probability sum_j P(k positions are j distinct bits) * fill_i^j.  The plan
# is the fewest blocks whose expected rate is at most the requested rate, and
# among the k that reach it with that many blocks, the k of the lowest rate.
# The floating-point steps follow the C in the same order, so that the two
# agree on the boundary cases too.
# ---------------------------------------------------------------------------

LN2 = 0.69314718055994530942
MAX_FPR_TERMS = 4096


def _distinct_prob_table():
    """
    table[k][j]: probability that k positions drawn independently from the
    512 of a block are j distinct ones.
    """
    m = float(BLOCK_BITS)
    table = [[0.0] * (MAX_K + 1) for _ in range(MAX_K + 1)]
    for k in range(1, MAX_K + 1):
        p = [0.0] * (MAX_K + 2)
        p[0] = 1.0
        for t in range(k):
            for j in range(t + 1, 0, -1):
                p[j] = p[j] * (j / m) + p[j - 1] * ((m - (j - 1)) / m)
            p[0] = 0.0
        for j in range(k + 1):
            table[k][j] = p[j]
    return table


DISTINCT_PROB = _distinct_prob_table()


def expected_fpr(nblocks, k, nkeys):
    """Expected false-positive rate of a filter holding nkeys keys."""
    lam = nkeys / float(nblocks)
    if lam <= 0.0:
        return 0.0
    spread = 8.0 * math.sqrt(lam) + 10.0
    lo = math.floor(lam - spread)
    hi = math.ceil(lam + spread)
    q = math.log1p(-1.0 / BLOCK_BITS)
    loglam = math.log(lam)
    total = 0.0
    mass = 0.0
    if lo < 0.0:
        lo = 0.0
    lo = float(lo)
    hi = float(hi)

    # at most MAX_FPR_TERMS points; each stands for "step" counts around it
    nterms = hi - lo + 1.0
    step = float(math.ceil(nterms / MAX_FPR_TERMS)) if nterms > MAX_FPR_TERMS else 1.0
    t = 0
    while t * step <= hi - lo:
        i = lo + t * step
        fill = -math.expm1(i * k * q)      # 1 - (1 - 1/512)^(i k)
        # log of the Poisson probability of i keys in a block
        if lam > 1e4:
            logp = (-i * math.log1p((i - lam) / lam) + (i - lam)
                    - 0.5 * math.log(2.0 * math.pi * i) - 1.0 / (12.0 * i))
        else:
            logp = i * loglam - lam - math.lgamma(i + 1.0)
        pois = step * math.exp(logp)
        if fill >= 1.0:
            hit = 1.0
        else:
            hit = 0.0
            pj = 1.0
            for j in range(1, k + 1):
                pj *= fill
                hit += DISTINCT_PROB[k][j] * pj
        total += pois * hit
        mass += pois
        t += 1
    if step > 1.0:
        total = total / mass if mass > 0.0 else 1.0
    return total


def _fewest_blocks(lo, hi, k, n, rate):
    """Smallest block count in [lo, hi] reaching rate with k, or 0."""
    if expected_fpr(hi, k, n) > rate:
        return 0
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if expected_fpr(mid, k, n) <= rate:
            hi = mid
        else:
            lo = mid + 1
    return lo


def plan(capacity, rate):
    """
    (nblocks, k) for capacity keys at a false-positive rate of at most rate,
    as bloom_create(capacity, rate) chooses them; ValueError if no filter up
    to the largest will do.
    """
    if capacity < 1:
        raise ValueError("capacity must be at least 1")
    if not (0.0 < rate < 1.0):
        raise ValueError("rate must be between 0 and 1")
    n = float(capacity)
    classic = -math.log(rate) / (LN2 * LN2)   # bits per key, unblocked

    # no blocked filter beats the classic optimum
    fb = math.floor(n * classic / BLOCK_BITS)
    if fb > float(MAX_NBLOCKS):
        raise ValueError("filter would be too large")
    floor_blocks = 1 if fb < 1.0 else int(fb)

    best_blocks = 0
    best_k = 0
    for attempt in range(2):
        if best_blocks != 0:
            break
        # first within 3x the classic size, then up to the largest filter
        hi = floor_blocks * 3 + 2 if attempt == 0 else MAX_NBLOCKS
        hi = min(hi, MAX_NBLOCKS)
        for kk in range(1, MAX_K + 1):
            b = _fewest_blocks(floor_blocks, best_blocks if best_blocks else hi,
                               kk, n, rate)
            if b != 0 and (best_blocks == 0 or b < best_blocks):
                best_blocks = b
                best_k = kk
    if best_blocks == 0:
        raise ValueError("filter would be too large")

    best_fpr = expected_fpr(best_blocks, best_k, n)
    for kk in range(1, MAX_K + 1):
        fpr = expected_fpr(best_blocks, kk, n)
        if fpr < best_fpr:
            best_fpr = fpr
            best_k = kk
    return best_blocks, best_k


# ---------------------------------------------------------------------------
# The filter
# ---------------------------------------------------------------------------

def _check_family_bytes(raw):
    """A family field: UTF-8 without control characters, NUL, zero padding."""
    if len(raw) != FAMILY_LEN:
        raise FormatError("family field must have 64 bytes")
    end = raw.find(b"\x00")
    if end < 0:
        raise FormatError("family name is not NUL-terminated")
    if raw[end:] != bytes(FAMILY_LEN - end):
        raise FormatError("family name is not zero-padded")
    try:
        name = raw[:end].decode("utf-8")     # strict: refuses bad UTF-8
    except UnicodeDecodeError:
        raise FormatError("family name is not UTF-8")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise FormatError("family name has a control character")
    return name


class BloomFilter:
    """A bloom filter in the bloomfilter extension's format, version 1."""

    def __init__(self, nblocks, nhashes, capacity, rate, family="",
                 seed=DEFAULT_SEED, bits=None, labels=(0, 0)):
        if not 1 <= nhashes <= MAX_K:
            raise ValueError("nhashes out of range")
        if not 1 <= nblocks <= MAX_NBLOCKS:
            raise ValueError("nblocks out of range")
        if len(family.encode("utf-8")) >= FAMILY_LEN:
            raise ValueError("family name too long")
        self.version = VERSION
        self.layout = LAYOUT_BLOCK512
        self.hash_scheme = HASH_XXH3
        self.nhashes = nhashes
        self.seed = seed
        self.nblocks = nblocks
        self.capacity = capacity
        self.rate = rate
        self.family = family
        # the label guard of an enum family: (number of labels, sum)
        self.labels = labels
        if isinstance(family, EnumFamily):
            self.labels = family.guard
        if bits is None:
            bits = bytearray(nblocks * BLOCK_BYTES)
        self.bits = bytearray(bits)

    # --- making one ---

    @classmethod
    def create(cls, capacity, rate=DEFAULT_RATE):
        """An empty filter, as bloom_create(capacity, rate) makes it."""
        nblocks, k = plan(capacity, rate)
        return cls(nblocks, k, capacity, rate)

    @classmethod
    def from_keys(cls, keys, keytype=None, capacity=None, rate=None,
                  family=None):
        """
        As the aggregate bloom_agg makes it.  keys are values of keytype, or,
        with keytype None, (family, canonical bytes) pairs such as
        enum_canonical returns; the family of an empty key list must then be
        given.  With capacity and rate: bloom_agg(key, capacity, rate), the
        same as bloom_create followed by adding every key.  Without: the
        unsized bloom_agg(key), sized for the number of distinct key hashes
        (at least 1) at the default rate.
        """
        pairs = [_as_pair(key, keytype) for key in keys]
        if family is None:
            family = FAMILIES[keytype] if keytype is not None else pairs[0][0]
        for fam, _ in pairs:
            if fam != family:
                raise FamilyError("keys of families %r and %r" % (family, fam))
        if capacity is None:
            hashes = set(key_hash(b, DEFAULT_SEED) for _, b in pairs)
            capacity = max(len(hashes), 1)
            rate = DEFAULT_RATE
        f = cls.create(capacity, rate)
        f.family = family        # the aggregate records it even over no rows
        if isinstance(family, EnumFamily):
            f.labels = family.guard
        for fam, b in pairs:
            f.add_canonical(fam, b)
        return f

    # --- reading and writing ---

    @classmethod
    def from_bytes(cls, data):
        """Parse and validate the bytes (bloom::bytea, or the binary form)."""
        data = bytes(data)
        if len(data) < HEADER_SIZE:
            raise FormatError("shorter than the 124-byte header")
        if data[0:4] != MAGIC:
            raise FormatError("bad magic number")
        version, layout, hash_scheme, nhashes = data[4], data[5], data[6], data[7]
        seed, nblocks, capacity = struct.unpack_from("<QQQ", data, 8)
        (rate,) = struct.unpack_from("<d", data, 32)
        (flags,) = struct.unpack_from("<I", data, 40)
        if version != VERSION:
            raise FormatError("unknown format version %d" % version)
        if layout != LAYOUT_BLOCK512:
            raise FormatError("unknown layout %d" % layout)
        if hash_scheme != HASH_XXH3:
            raise FormatError("unknown hash scheme %d" % hash_scheme)
        if not 1 <= nhashes <= MAX_K:
            raise FormatError("nhashes out of range")
        if not 1 <= nblocks <= MAX_NBLOCKS:
            raise FormatError("nblocks out of range")
        if len(data) != HEADER_SIZE + nblocks * BLOCK_BYTES:
            raise FormatError("length does not match nblocks")
        if not 1 <= capacity <= INT64_MAX:
            raise FormatError("capacity out of range")
        if not (0.0 < rate < 1.0):          # also refuses NaN
            raise FormatError("rate not between 0 and 1")
        (nlabels, labelsum, reserved) = struct.unpack_from("<IQI", data, 108)
        if flags != 0 or reserved != 0:
            raise FormatError("reserved bytes are not zero")
        family = _check_family_bytes(data[44:108])
        if not family.startswith(ENUM_PREFIX) and (nlabels, labelsum) != (0, 0):
            raise FormatError("a label guard for a family of no enum")
        if nlabels == 0 and labelsum != 0:
            raise FormatError("a label guard of no labels but a sum")
        return cls(nblocks, nhashes, capacity, rate, family, seed,
                   data[HEADER_SIZE:], (nlabels, labelsum))

    @classmethod
    def from_base64(cls, text):
        """
        Parse the text form (what bloom's output function writes): base64
        with padding, no line breaks, and canonical (each filter has exactly
        one text form, so unused padding bits must be zero).
        """
        if isinstance(text, bytes):
            text = text.decode("ascii")
        if len(text) % 4 != 0:
            raise FormatError("base64 length is not a multiple of 4")
        try:
            data = base64.b64decode(text, validate=True)
        except (ValueError, TypeError):
            raise FormatError("not base64")
        if base64.b64encode(data).decode("ascii") != text:
            raise FormatError("not canonical base64")
        return cls.from_bytes(data)

    def to_bytes(self):
        family = self.family.encode("utf-8")
        header = (MAGIC
                  + bytes([self.version, self.layout, self.hash_scheme,
                           self.nhashes])
                  + struct.pack("<QQQd", self.seed, self.nblocks,
                                self.capacity, self.rate)
                  + struct.pack("<I", 0)                       # flags
                  + family + bytes(FAMILY_LEN - len(family))
                  + struct.pack("<IQI", self.labels[0], self.labels[1],
                                0))                            # reserved
        assert len(header) == HEADER_SIZE
        return header + bytes(self.bits)

    def to_base64(self):
        return base64.b64encode(self.to_bytes()).decode("ascii")

    # --- keys ---

    def add(self, key, keytype):
        """Add a key of the named PostgreSQL type (see canonical)."""
        self.add_canonical(*canonical(key, keytype))

    def contains(self, key, keytype):
        """Probe for a key of the named type: False means surely absent."""
        return self.contains_canonical(*canonical(key, keytype))

    def _check_family(self, family):
        if "/pg" in self.family:
            raise NotReproducible(
                "keys of family %r are hashed by PostgreSQL itself" % self.family)
        if self.family != "" and self.family != family:
            raise FamilyError("the filter holds keys of family %r, the key is "
                              "of family %r" % (self.family, family))

    def _check_labels(self, family):
        """
        For an enum key (family an EnumFamily): True if the filter's label
        guard is the type's labels now, False if labels were added since;
        LabelsError if a label was renamed since the keys were hashed.
        """
        if not isinstance(family, EnumFamily) or self.family == "":
            return True
        if tuple(self.labels) == family.guard:
            return True
        if labels_contain(self.labels, family.labels):
            return False
        raise LabelsError("a label of %s was renamed since the filter's keys "
                          "were hashed (under %d labels; it has %d now)"
                          % (family, self.labels[0], len(family.labels)))

    def add_canonical(self, family, canonical_bytes):
        self._check_family(family)
        current = self._check_labels(family)
        if self.family == "" or not current:
            # the first key fixes the family; an enum key records the labels
            # now, which a key of a label added since needs
            self.family = family
            if isinstance(family, EnumFamily):
                self.labels = family.guard
        self.add_hash(key_hash(canonical_bytes, self.seed))

    def contains_canonical(self, family, canonical_bytes):
        self._check_family(family)
        self._check_labels(family)
        if self.family == "":
            return False                   # no key was ever added
        return self.contains_hash(key_hash(canonical_bytes, self.seed))

    def add_hash(self, h):
        start = block_of(h, self.nblocks) * BLOCK_BYTES
        for j in bit_positions(h, self.nhashes):
            # bit j of a block is bit (j & 7) of its byte (j >> 3)
            self.bits[start + (j >> 3)] |= 1 << (j & 7)

    def contains_hash(self, h):
        start = block_of(h, self.nblocks) * BLOCK_BYTES
        for j in bit_positions(h, self.nhashes):
            if not self.bits[start + (j >> 3)] & (1 << (j & 7)):
                return False
        return True


def _as_pair(key, keytype):
    if keytype is None:
        return key
    return canonical(key, keytype)
