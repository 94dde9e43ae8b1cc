/*-------------------------------------------------------------------------
 *
 * bloom_hash.c
 *	  The 64-bit hash of a key: its canonical bytes (see the README's
 *	  "Hashing"), then XXH3-64; and the check of a key's family against
 *	  the filter's.
 *
 * How each type is hashed is decided once per call site, in bloom_keys.c;
 * this file runs per key and reads no catalog (except an enum's label).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_hash.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"
#include "utils/uuid.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom_pg.h"

/* XXH3 of the 8 little-endian bytes of v */
static inline uint64
hash_u64(uint64 v, uint64 seed)
{
	uint64		le = bloom_to_le64(v);

	return XXH3_64bits_withSeed(&le, 8, seed);
}

/*
 * XXH3 of a string in UTF-8: text hashes the same in every database,
 * whatever its encoding (a no-op in UTF-8 databases).
 */
static inline uint64
hash_string(const BloomKeyType *kt, const char *s, size_t len, uint64 seed)
{
	char	   *u;
	uint64		h;

	if (likely(kt->utf8))
		return XXH3_64bits_withSeed(s, len, seed);
	u = pg_server_to_any(s, (int) len, PG_UTF8);
	if (u == s)
		return XXH3_64bits_withSeed(s, len, seed);
	h = XXH3_64bits_withSeed(u, strlen(u), seed);
	pfree(u);
	return h;
}

static inline uint64
hash_varlena(const BloomKeyType *kt, Datum key, bool string, bool strip_blanks,
			 uint64 seed)
{
	struct varlena *p = PG_DETOAST_DATUM_PACKED(key);
	const char *s = VARDATA_ANY(p);
	size_t		len = VARSIZE_ANY_EXHDR(p);
	uint64		h;

	/* char(n) compares without trailing blanks, so hash without them */
	if (strip_blanks)
		while (len > 0 && s[len - 1] == ' ')
			len--;
	h = string ? hash_string(kt, s, len, seed) :
		XXH3_64bits_withSeed(s, len, seed);
	if ((Pointer) p != DatumGetPointer(key))
		pfree(p);
	return h;
}

/*
 * The 64-bit hash of a key; see the README's "Hashing" section for the
 * canonical bytes of each type.
 */
uint64
bloom_key_hash(BloomKeyType *kt, Datum key, uint64 seed)
{
	switch (kt->kind)
	{
		case KEY_INT2:
			return hash_u64((uint64) (int64) DatumGetInt16(key), seed);
		case KEY_INT4:
			return hash_u64((uint64) (int64) DatumGetInt32(key), seed);
		case KEY_INT8:
			return hash_u64((uint64) DatumGetInt64(key), seed);
		case KEY_TEXT:
			return hash_varlena(kt, key, true, false, seed);
		case KEY_BYTEA:
			return hash_varlena(kt, key, false, false, seed);
		case KEY_NAME:
			{
				const char *s = NameStr(*DatumGetName(key));

				return hash_string(kt, s, strlen(s), seed);
			}
		case KEY_BPCHAR:
			return hash_varlena(kt, key, true, true, seed);
		case KEY_UUID:
			return XXH3_64bits_withSeed(DatumGetUUIDP(key)->data,
										UUID_LEN, seed);
		case KEY_BOOL:
			{
				uint8		b = DatumGetBool(key) ? 1 : 0;

				return XXH3_64bits_withSeed(&b, 1, seed);
			}
		case KEY_FLOAT4:
		case KEY_FLOAT8:
			{
				double		d = kt->kind == KEY_FLOAT4 ?
					(double) DatumGetFloat4(key) : DatumGetFloat8(key);
				uint64		u;

				/* -0 = +0 and all NaNs are equal under float "=" */
				if (d == 0.0)
					d = 0.0;
				if (isnan(d))
					u = UINT64CONST(0x7ff8000000000000);
				else
					memcpy(&u, &d, sizeof(u));
				return hash_u64(u, seed);
			}
		case KEY_NUMERIC:
			{
				/* 1.0 = 1.00: hash the value with trailing zeros removed */
				char	   *s = numeric_normalize(DatumGetNumeric(key));
				uint64		h = XXH3_64bits_withSeed(s, strlen(s), seed);

				pfree(s);
				return h;
			}
		case KEY_INT32:
			{
				uint8		buf[4];
				uint32		v = (uint32) DatumGetInt32(key);

				for (int i = 0; i < 4; i++)
					buf[i] = (uint8) (v >> (8 * i));
				return XXH3_64bits_withSeed(buf, 4, seed);
			}
		case KEY_INT64:
			return hash_u64((uint64) DatumGetInt64(key), seed);
		case KEY_ENUM:
			{
				char	   *label = DatumGetCString(DirectFunctionCall1(enum_out, key));
				uint64		h = hash_string(kt, label, strlen(label), seed);

				pfree(label);
				return h;
			}
		case KEY_GENERIC:
			return hash_u64(DatumGetUInt64(FunctionCall2Coll(&kt->hashfn,
															 kt->collid, key,
															 UInt64GetDatum(0))),
							seed);
	}
	elog(ERROR, "unknown bloom key kind %d", (int) kt->kind);
	return 0;					/* keep compiler quiet */
}

/*
 * Filters, aggregate states and indexes remember the family of their keys
 * (and, for an enum, the labels they were hashed under); a key of another
 * family would hash differently from the "same" value added before, so it
 * is an error, never a silent false.  Nothing recorded yet (a filter
 * without keys) accepts any family.  Returns false when the labels of an
 * enum family were added to since (see bloom_check_labels), else true.
 * indexname names an index for the messages about labels, NULL a filter.
 */
bool
bloom_check_key_family(const char *family, const BloomLabels *labels,
					   BloomKeyType *kt, const char *indexname)
{
	if (family[0] == '\0')
	{
		bloom_labels_refresh(kt);	/* the caller may record them */
		return true;
	}
	if (strcmp(family, kt->family) != 0)
	{
		const char *have = bloom_family_display(family);

		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("bloom filter key of type %s does not match the filter's key family",
					   format_type_be(kt->typid)),
				errdetail("The filter holds keys of family \"%s\"; the key is of family \"%s\".",
						  have, bloom_family_display(kt->family)),
				errhint("Cast the key to a type of family \"%s\".", have));
	}
	if (kt->kind == KEY_ENUM)
		return bloom_check_labels(kt, labels, indexname);
	return true;
}

/* The same for a filter's header. */
bool
bloom_check_family(const BloomFilter *f, BloomKeyType *kt)
{
	return bloom_check_key_family(f->family, &f->labels, kt, NULL);
}
