/*-------------------------------------------------------------------------
 *
 * bloom.h
 *	  The bloom filter format, and the PostgreSQL-free core that reads,
 *	  writes, sizes and probes it.
 *
 * This header is the one description of the on-disk format.  Nothing in
 * here includes a PostgreSQL header: the core (bloom_sizing.c, bloom_bits.c,
 * bloom_unique.c, bloom_format.c) is compiled on its own for the fuzzers and
 * microbenchmarks.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_H
#define BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * On-disk format, version 1
 * -------------------------
 * A bloom value is a varlena.  After the 4-byte varlena header comes the
 * payload below.  Every multi-byte field is little-endian whatever the host,
 * so a filter written on one machine is read unchanged on any other (binary
 * COPY, pg_dump, physical replication across architectures is not a thing,
 * but logical copies are).
 *
 *	offset size  field
 *	     0    4  magic        "BLMF"
 *	     4    1  version      BLOOM_VERSION (1); anything else is refused
 *	     5    1  layout       BLOOM_LAYOUT_BLOCK512 (1)
 *	     6    1  hash scheme  BLOOM_HASH_XXH3 (1): XXH3-64 of the key's
 *	                          canonical bytes, seeded with "seed"
 *	     7    1  nhashes      k, bits set per key, 1..BLOOM_MAX_K
 *	     8    8  seed         XXH3 seed (0 for every filter made today)
 *	    16    8  nblocks      number of 64-byte blocks, 1..BLOOM_MAX_NBLOCKS
 *	    24    8  capacity     design number of keys (informational)
 *	    32    8  rate         design false-positive rate, IEEE-754 binary64
 *	                          (informational)
 *	    40    4  flags        reserved, must be 0
 *	    44   64  family       key family: NUL-padded UTF-8 name such as
 *	                          "integer", "text" or "enum:public.mood"; all
 *	                          zero until the first key is added
 *	   108    4  nlabels      an enum family's label guard (below), else 0:
 *	                          how many labels the enum had
 *	   112    8  labelsum     the guard's sum of the labels' hashes, else 0
 *	   120    4  reserved     must be 0 (pads the header so that the bits
 *	                          start 128 bytes into the datum: a 64-byte
 *	                          aligned datum has cache-line aligned blocks)
 *	   124    -  bits         nblocks * 64 bytes
 *
 * Offsets above count from the start of the payload, after the 4-byte
 * varlena header; the payload header is BLOOM_HEADER_SIZE (124) bytes, so the
 * bits start 128 bytes into the datum.
 *
 * Enum families and their label guard.  An enum key hashes its label's UTF-8
 * bytes (its OID changes with dump and restore), so the family, "enum:" and
 * the type's qualified name, says how keys hash and nothing more: adding a
 * label changes no key's hash and no family.  Renaming a label does change
 * how that label's keys hash, and the family cannot show it, so an enum
 * family also records the labels the keys were hashed under: nlabels, their
 * number, and labelsum, the sum modulo 2^64 of XXH3-64 (seed 0) of each
 * label's UTF-8 bytes.  The sum does not depend on the labels' order or
 * OIDs, so it survives dump and restore and ADD VALUE ... BEFORE/AFTER.  A
 * filter is used (bloom_keys.c) when the type's labels now are those plus
 * some added since: some nlabels of them sum to labelsum (a search that is
 * bounded: with too many labels added since to tell, the filter is refused
 * too).  Otherwise a label was renamed (or the type made again with fewer),
 * and the filter is refused.  The guard cannot see renames that end with
 * the same set of names (two labels swapped, or a label renamed and its old
 * name added again).  A guard of no labels (an empty enum's aggregate over
 * no rows) has a labelsum of 0.  Every family without the "enum:" prefix has
 * nlabels and labelsum 0.
 *
 * Bit layout.  A key's 64-bit hash h picks one block with a multiply-shift
 * of its high 32 bits, block = ((h >> 32) * nblocks) >> 32, and k bits inside
 * that 512-bit block from the splitmix64 stream seeded with h: word w_t =
 * mix(h + (t+1) * 0x9E3779B97F4A7C15), bit i = (w_(i/7) >> (9 * (i % 7))) &
 * 511 (see bloom_mix).  Bit j of a block is bit (j & 7) of byte (j >> 3).
 * The layout is defined on bytes, so it does not depend on the host's byte
 * order.
 *
 * capacity and rate are what the filter was sized for.  Probing uses only
 * seed, nblocks and nhashes, so those (and the key family) are what must
 * match for two filters to be combined; block counts that are whole
 * multiples of each other fold (see bloom_fold).  The label guards of two
 * filters of one enum family may differ (a label added in between): the
 * PostgreSQL glue checks both against the catalog and records its labels.
 */
#define BLOOM_MAGIC				"BLMF"
#define BLOOM_VERSION			1
#define BLOOM_LAYOUT_BLOCK512	1
#define BLOOM_HASH_XXH3			1

#define BLOOM_HEADER_SIZE		124
#define BLOOM_BLOCK_BYTES		64
#define BLOOM_BLOCK_BITS		512
#define BLOOM_FAMILY_LEN		64	/* including the terminating NUL */
#define BLOOM_ENUM_PREFIX		"enum:"	/* starts every enum family */
#define BLOOM_MAX_K				32

/* field offsets within the payload */
#define BLOOM_OFF_MAGIC			0
#define BLOOM_OFF_VERSION		4
#define BLOOM_OFF_LAYOUT		5
#define BLOOM_OFF_HASH			6
#define BLOOM_OFF_NHASHES		7
#define BLOOM_OFF_SEED			8
#define BLOOM_OFF_NBLOCKS		16
#define BLOOM_OFF_CAPACITY		24
#define BLOOM_OFF_RATE			32
#define BLOOM_OFF_FLAGS			40
#define BLOOM_OFF_FAMILY		44
#define BLOOM_OFF_NLABELS		108
#define BLOOM_OFF_LABELSUM		112
#define BLOOM_OFF_RESERVED		120

/*
 * The largest filter: 800,000,000 bytes of bits.  Smaller than the 1 GB
 * varlena limit on purpose: the text form (base64, 4/3 of the size) must also
 * fit in 1 GB, or pg_dump and COPY could not write the filter out, and a
 * filter that cannot be dumped is a filter that can be lost.
 */
#define BLOOM_MAX_NBLOCKS		UINT64_C(12500000)
#define BLOOM_MAX_BITS_BYTES	(BLOOM_MAX_NBLOCKS * BLOOM_BLOCK_BYTES)

#define BLOOM_DEFAULT_RATE		0.01
#define BLOOM_DEFAULT_SEED		UINT64_C(0)

/* payload size of a filter with this many blocks */
#define BLOOM_PAYLOAD_SIZE(nblocks) \
	((size_t) BLOOM_HEADER_SIZE + (size_t) (nblocks) * BLOOM_BLOCK_BYTES)

/*
 * The label guard of an enum family (see above); all zero for any other.
 */
typedef struct BloomLabels
{
	uint32_t	count;
	uint64_t	sum;
} BloomLabels;

static inline bool
bloom_family_is_enum(const char *family)
{
	return strncmp(family, BLOOM_ENUM_PREFIX, sizeof(BLOOM_ENUM_PREFIX) - 1) == 0;
}

static inline bool
bloom_labels_equal(const BloomLabels *a, const BloomLabels *b)
{
	return a->count == b->count && a->sum == b->sum;
}

/*
 * A decoded header, in host order.  The bits are not copied: "bits" points
 * into the payload it was decoded from.
 */
typedef struct BloomFilter
{
	uint8_t		version;
	uint8_t		layout;
	uint8_t		hash_scheme;
	uint8_t		nhashes;
	uint64_t	seed;
	uint64_t	nblocks;
	uint64_t	capacity;
	double		rate;
	char		family[BLOOM_FAMILY_LEN];
	BloomLabels labels;			/* enum families only */
	uint8_t    *bits;
} BloomFilter;

/* What a validator found wrong; BLOOM_OK is 0. */
typedef enum BloomError
{
	BLOOM_OK = 0,
	BLOOM_ERR_TRUNCATED,		/* shorter than the header */
	BLOOM_ERR_MAGIC,			/* not a bloom filter at all */
	BLOOM_ERR_VERSION,			/* a format version we do not know */
	BLOOM_ERR_LAYOUT,
	BLOOM_ERR_HASH,
	BLOOM_ERR_NHASHES,
	BLOOM_ERR_NBLOCKS,
	BLOOM_ERR_LENGTH,			/* length disagrees with nblocks */
	BLOOM_ERR_CAPACITY,
	BLOOM_ERR_RATE,
	BLOOM_ERR_RESERVED,			/* flags or reserved bytes not zero */
	BLOOM_ERR_FAMILY,			/* family not NUL-terminated/padded */
	BLOOM_ERR_LABELS			/* a label guard of no labels but a sum */
} BloomError;

/*
 * Aggregate state serialization (bloom_agg's serialfunc/deserialfunc), also
 * little-endian:
 *
 *	offset size  field
 *	     0    4  magic       "BLMS"
 *	     4    1  version     1
 *	     5    1  mode        BLOOM_STATE_HASHES or BLOOM_STATE_BITS
 *	     6    1  sized       0 (unsized bloom_agg) or 1
 *	     7    1  reserved    0
 *	     8    8  count       number of hashes (HASHES) or 0 (BITS)
 *	    16   64  family
 *	    80    8  capacity    (sized only, else 0)
 *	    88    8  rate        (sized only, else 0)
 *	    96    4  nlabels     the label guard of an enum family, as in a
 *	   100    8  labelsum    filter's header (else 0)
 *	   108    4  reserved    0
 *	   112    -  HASHES: count 64-bit hashes;
 *	             BITS: a complete bloom payload (checked by bloom_check),
 *	             with the state's family and label guard
 */
#define BLOOM_STATE_MAGIC		"BLMS"
#define BLOOM_STATE_OFF_MAGIC		0
#define BLOOM_STATE_OFF_VERSION		4
#define BLOOM_STATE_OFF_MODE		5
#define BLOOM_STATE_OFF_SIZED		6
#define BLOOM_STATE_OFF_RESERVED	7
#define BLOOM_STATE_OFF_COUNT		8
#define BLOOM_STATE_OFF_FAMILY		16
#define BLOOM_STATE_OFF_CAPACITY	80
#define BLOOM_STATE_OFF_RATE		88
#define BLOOM_STATE_OFF_NLABELS		96
#define BLOOM_STATE_OFF_LABELSUM	100
#define BLOOM_STATE_OFF_RESERVED2	108
#define BLOOM_STATE_HEADER_SIZE	112
#define BLOOM_STATE_HASHES		1
#define BLOOM_STATE_BITS		2

typedef struct BloomStateHeader
{
	uint8_t		mode;
	bool		sized;
	uint64_t	count;
	char		family[BLOOM_FAMILY_LEN];
	BloomLabels labels;
	uint64_t	capacity;
	double		rate;
} BloomStateHeader;

/* little-endian access, whatever the host */
static inline uint64_t
bloom_get_u64(const uint8_t *p)
{
	return (uint64_t) p[0] | (uint64_t) p[1] << 8 | (uint64_t) p[2] << 16 |
		(uint64_t) p[3] << 24 | (uint64_t) p[4] << 32 |
		(uint64_t) p[5] << 40 | (uint64_t) p[6] << 48 |
		(uint64_t) p[7] << 56;
}

static inline uint64_t
bloom_to_le64(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

static inline void
bloom_put_u64(uint8_t *p, uint64_t v)
{
	v = bloom_to_le64(v);
	memcpy(p, &v, 8);
}

static inline uint32_t
bloom_get_u32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
		(uint32_t) p[3] << 24;
}

static inline void
bloom_put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* --- Probing and setting bits (inline: the hot paths) --- */

/*
 * The k bit positions of a hash inside its block come from a splitmix64
 * stream seeded with the hash: each output word gives seven 9-bit positions.
 * Fully mixed words make the positions independent, which is what
 * bloom_expected_fpr() assumes; cheaper schemes (multiplying the low word by
 * per-position salts, as Parquet does) measured above the expected rate
 * (docs/format.md, "The bits").
 */
#define BLOOM_GOLDEN	UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t
bloom_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static inline uint64_t
bloom_block_of(uint64_t h, uint64_t nblocks)
{
	return ((h >> 32) * nblocks) >> 32;
}

/*
 * The bit positions (0..511) of a hash within its block: the one definition
 * of where a key's bits lie.  Each round mixes the hash with the next
 * multiple of the golden ratio and takes seven 9-bit fields of the result;
 * fills pos[0..k-1].
 */
static inline void
bloom_bit_positions(uint64_t h, int k, uint16_t *pos)
{
	uint64_t	s = h;
	int			i = 0;

	while (i < k)
	{
		uint64_t	w = bloom_mix(s += BLOOM_GOLDEN);
		int			n = k - i < 7 ? k - i : 7;

		for (; n > 0; n--, w >>= 9)
			pos[i++] = (uint16_t) (w & 511);
	}
}

/*
 * Bit j & 7 of a byte, from a table: a shift by a variable count takes three
 * micro-operations on x86-64 without BMI2, a load one.
 */
static const uint8_t bloom_bit[8] = {1, 2, 4, 8, 16, 32, 64, 128};

/* set the bits of one hash */
static inline void
bloom_set_hash(uint8_t *bits, uint64_t nblocks, int k, uint64_t h)
{
	uint8_t    *blk = bits + bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES;
	uint16_t	pos[BLOOM_MAX_K];

	bloom_bit_positions(h, k, pos);
	for (int i = 0; i < k; i++)
		blk[pos[i] >> 3] |= bloom_bit[pos[i] & 7];
}

/* test one hash against its 64-byte block */
static inline bool
bloom_block_test(const uint8_t *blk, int k, uint64_t h)
{
	uint16_t	pos[BLOOM_MAX_K];

	bloom_bit_positions(h, k, pos);
	for (int i = 0; i < k; i++)
		if (!(blk[pos[i] >> 3] & bloom_bit[pos[i] & 7]))
			return false;
	return true;
}

/* Ask for the block of a hash to be brought into the cache, for writing. */
static inline void
bloom_prefetch(const uint8_t *bits, uint64_t nblocks, uint64_t h)
{
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(bits + bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES, 1);
#else
	(void) bits;
	(void) nblocks;
	(void) h;
#endif
}

static inline bool
bloom_test_hash(const uint8_t *bits, uint64_t nblocks, int k, uint64_t h)
{
	return bloom_block_test(bits + bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES,
							k, h);
}

/* --- bloom_sizing.c: sizing, expected rate and fill, estimates --- */

extern double bloom_expected_fpr(uint64_t nblocks, int k, double nkeys);
extern bool bloom_plan(uint64_t capacity, double rate,
					   uint64_t *nblocks, int *k);
extern uint64_t bloom_max_capacity(double rate);
extern void bloom_init_header(BloomFilter *f, uint64_t capacity, double rate,
							  uint64_t nblocks, int k, const char *family);
extern double bloom_estimate_keys(uint64_t nblocks, int k, uint64_t bits_set);
extern void bloom_expected_fill(uint64_t nblocks, int k, double nkeys,
								double *mean, double *sd);
extern bool bloom_over_capacity(uint64_t nblocks, int k, uint64_t capacity,
								uint64_t bits_set);

/*
 * Distinct keys in a stream of key hashes, estimated in 4 kB whatever their
 * number (HyperLogLog, 2^12 registers: about 1.6% standard error), for what
 * must size a filter from keys it meets once (an index's compaction).
 */
#define BLOOM_DISTINCT_BITS	12

typedef struct BloomDistinct
{
	uint8_t		reg[1 << BLOOM_DISTINCT_BITS];
} BloomDistinct;

extern void bloom_distinct_add(BloomDistinct *d, uint64_t h);
extern double bloom_distinct_estimate(const BloomDistinct *d);

/* --- bloom_unique.c: dropping duplicate hashes --- */

extern size_t bloom_sort_unique(uint64_t *a, size_t n);
extern size_t bloom_unique(uint64_t *a, size_t n, uint64_t *scratch);
extern size_t bloom_unique_scratch(size_t n);

/*
 * --- bloom_bits.c: counting, combining and folding bits ---
 *
 * How two filters relate (bloom_shape_compare).  Filters combine when every
 * field that decides where a key's bits go is equal: version, layout, hash
 * scheme, nhashes, seed, and nblocks, or nblocks differing by a whole factor
 * (the larger is then folded, see bloom_fold).  A key family of "" (no key
 * added yet) matches any family.  capacity, rate and the label guard do not
 * count.
 */
typedef enum BloomShape
{
	BLOOM_SHAPE_SAME = 0,
	BLOOM_SHAPE_FOLD_FIRST,		/* first's nblocks a multiple of second's */
	BLOOM_SHAPE_FOLD_SECOND,	/* second's nblocks a multiple of first's */
	BLOOM_SHAPE_LAYOUT,			/* version or layout differ */
	BLOOM_SHAPE_HASH,			/* hash scheme differs */
	BLOOM_SHAPE_NHASHES,
	BLOOM_SHAPE_SEED,
	BLOOM_SHAPE_FAMILY,
	BLOOM_SHAPE_SIZE			/* nblocks differ, neither divides the other */
} BloomShape;

typedef enum BloomMergeOp
{
	BLOOM_MERGE_OR,
	BLOOM_MERGE_AND
} BloomMergeOp;

extern uint64_t bloom_popcount(const uint8_t *bits, size_t nbytes);
extern BloomShape bloom_shape_compare(const BloomFilter *a,
									  const BloomFilter *b);
extern void bloom_combine_header(BloomFilter *out, const BloomFilter *a,
								 const BloomFilter *b);
extern void bloom_fold(uint8_t *bits, uint64_t nblocks, uint64_t to_nblocks);
extern void bloom_merge_bits(uint8_t *dst, uint64_t dst_nblocks,
							 const uint8_t *src, uint64_t src_nblocks,
							 BloomMergeOp op);
extern uint64_t bloom_popcount_union(const uint8_t *a, uint64_t a_nblocks,
									 const uint8_t *b, uint64_t b_nblocks);
extern void bloom_fill_stats(const uint8_t *bits, uint64_t nblocks, int k,
							 uint64_t *bits_set, double *fpr);
extern bool bloom_set_hash_changed(uint8_t *bits, uint64_t nblocks, int k,
								   uint64_t h);

/* --- bloom_format.c: encode, decode, validate, base64 --- */

extern void bloom_write_header(uint8_t *payload, const BloomFilter *f);
extern BloomError bloom_read_header(const uint8_t *payload, size_t len,
									BloomFilter *f);
extern BloomError bloom_read_header_only(const uint8_t *header, size_t len,
										 BloomFilter *f);
extern BloomError bloom_check(const uint8_t *payload, size_t len,
							  BloomFilter *f);
extern const char *bloom_error_message(BloomError err);

extern void bloom_state_write_header(uint8_t *buf, const BloomStateHeader *s);
extern const char *bloom_state_check(const uint8_t *buf, size_t len,
									 BloomStateHeader *s,
									 const uint8_t **body, size_t *bodylen);

extern size_t bloom_base64_encoded_len(size_t n);
extern void bloom_base64_encode(const uint8_t *src, size_t n, char *dst);
extern bool bloom_base64_decoded_len(const char *src, size_t n, size_t *out);
extern bool bloom_base64_decode(const char *src, size_t n, uint8_t *dst);

#endif							/* BLOOM_H */
