/*-------------------------------------------------------------------------
 *
 * bloom_value.c
 *	  Helpers the SQL functions share: making a new filter, opening a stored
 *	  one, sizing with errors, validating untrusted bytes, and telling why
 *	  two filters do not combine.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_value.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "fmgr.h"
#include "funcapi.h"

#include "bloom_pg.h"

#ifdef MADV_HUGEPAGE
#define HUGE_PAGE		((uintptr_t) 2 * 1024 * 1024)
#define HUGE_MIN_SIZE	((Size) 4 * 1024 * 1024)
#endif

/*
 * palloc_extended of size bytes in cxt (MCXT_ALLOC_HUGE, plus flags), with
 * the 2 MB pages inside a large chunk marked for transparent huge pages.
 * The aggregate's filters, hash lists and serialized states are written
 * once, whole, into fresh memory: on 4 kB pages that is a page fault every
 * 4 kB, and on a virtual machine the faults can cost more than the writes.
 * The advice only counts for pages not yet touched, so a zeroed chunk is
 * zeroed after it.  Advice only: where the kernel has no huge pages,
 * nothing changes.
 */
void *
bloom_alloc_big(MemoryContext cxt, Size size, int flags)
{
#ifdef MADV_HUGEPAGE
	if (size >= HUGE_MIN_SIZE)
	{
		void	   *p;
		uintptr_t	start;
		uintptr_t	end;

		p = MemoryContextAllocExtended(cxt, size,
									   MCXT_ALLOC_HUGE | (flags & ~MCXT_ALLOC_ZERO));
		if (p == NULL)
			return NULL;		/* MCXT_ALLOC_NO_OOM */
		start = TYPEALIGN(HUGE_PAGE, (uintptr_t) p);
		end = TYPEALIGN_DOWN(HUGE_PAGE, (uintptr_t) p + size);
		if (end > start)
			(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
		if (flags & MCXT_ALLOC_ZERO)
			memset(p, 0, size);
		return p;
	}
#endif
	return MemoryContextAllocExtended(cxt, size, MCXT_ALLOC_HUGE | flags);
}

/*
 * Allocate an empty filter (all bits zero) with the given geometry, key
 * family and label guard (NULL: none).
 */
bytea *
bloom_new(uint64 capacity, double rate, uint64 nblocks, int k,
		  const char *family, const BloomLabels *labels)
{
	BloomFilter f;
	size_t		len = BLOOM_PAYLOAD_SIZE(nblocks);
	bytea	   *v;

	Assert(nblocks >= 1 && nblocks <= BLOOM_MAX_NBLOCKS);
	v = (bytea *) bloom_alloc_big(CurrentMemoryContext, VARHDRSZ + len,
								  MCXT_ALLOC_ZERO);
	SET_VARSIZE(v, VARHDRSZ + len);
	bloom_init_header(&f, capacity, rate, nblocks, k, family);
	if (labels)
		f.labels = *labels;
	bloom_write_header(BLOOM_PAYLOAD(v), &f);
	return v;
}

/*
 * Decode the header of a detoasted filter.  Values reach here only through
 * the validating input paths, so a bad header means corrupt storage; the
 * check is O(1) and keeps a damaged page from turning into a wild read.
 */
void
bloom_open(bytea *v, BloomFilter *f)
{
	BloomError	err = bloom_read_header(BLOOM_PAYLOAD(v),
										VARSIZE(v) - VARHDRSZ, f);

	if (err != BLOOM_OK)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("bloom filter is corrupt"),
				errdetail("%s", bloom_error_message(err)));
}

/*
 * Check the arguments of bloom_create (and of the sized bloom_agg) and size
 * the filter, or raise the error a user can act on.
 */
void
bloom_plan_or_error(int64 capacity, double rate, uint64 *nblocks, int *k)
{
	if (capacity < 1)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("bloom filter capacity must be at least 1, not " INT64_FORMAT,
					   capacity),
				errhint("The capacity is the number of distinct keys the filter is sized for."));
	if (!(rate > 0.0 && rate < 1.0))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("bloom filter false-positive rate must be between 0 and 1, not %g",
					   rate),
				errhint("Pass a rate such as 0.01 for one false positive in a hundred probes."));
	if (!bloom_plan((uint64) capacity, rate, nblocks, k))
	{
		uint64		most = bloom_max_capacity(rate);

		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg_plural("bloom filter for " INT64_FORMAT " key at false-positive rate %g would be too large",
							  "bloom filter for " INT64_FORMAT " keys at false-positive rate %g would be too large",
							  capacity, capacity, rate),
				errdetail("A filter holds at most %llu bytes of bits, so that its text form (used by pg_dump and COPY) fits in the 1 GB limit of a value.",
						  (unsigned long long) BLOOM_MAX_BITS_BYTES),
				most > 0 ?
				errhint("At this rate the capacity can be at most %llu; raise the rate or split the keys across several filters.",
						(unsigned long long) most) :
				errhint("No filter reaches this rate; raise the rate."));
	}
}

/*
 * Validate a value made from untrusted bytes (text input, binary receive,
 * the cast from bytea), in place, and rewrite its header from the fields
 * read.  Errors are soft where the caller passes an escontext (text input on
 * PostgreSQL 16 and later): then false is returned instead of throwing.
 */
bool
bloom_validate(bytea *v, int sqlstate, Node *escontext)
{
	BloomFilter f;
	BloomError	err = bloom_check(BLOOM_PAYLOAD(v), VARSIZE(v) - VARHDRSZ, &f);

	if (err != BLOOM_OK)
		bloom_ereturn(escontext, false,
					  errcode(sqlstate),
					  errmsg("invalid bloom filter"),
					  errdetail("%s", bloom_error_message(err)));
	bloom_write_header(BLOOM_PAYLOAD(v), &f);
	return true;
}

/* --- shapes, for bloom_info and the errors of combining --- */

const char *
bloom_layout_name(uint8 layout)
{
	return layout == BLOOM_LAYOUT_BLOCK512 ? "block512" : "unknown";
}

const char *
bloom_hash_scheme_name(uint8 scheme)
{
	return scheme == BLOOM_HASH_XXH3 ? "xxh3" : "unknown";
}

/* "block512 with 19 blocks, 5 hashes, seed 0 and key family "integer"" */
static char *
shape_string(const BloomFilter *f)
{
	return psprintf("%s with %llu blocks, %d hashes, seed %llu and %s%s%s",
					bloom_layout_name(f->layout),
					(unsigned long long) f->nblocks, (int) f->nhashes,
					(unsigned long long) f->seed,
					f->family[0] ? "key family \"" : "no key family yet",
					f->family, f->family[0] ? "\"" : "");
}

/*
 * How two filters combine, or the error that says why they do not, showing
 * both shapes.  first and second name them in the message.  out, if not
 * NULL, gets the header of their combination (bloom_combine_header).  Two
 * filters of one enum family made under different labels (one was added in
 * between) are both checked against the type's labels now, which the
 * combination records.
 */
BloomShape
bloom_check_combinable(const BloomFilter *a, const BloomFilter *b,
					   const char *first, const char *second,
					   BloomFilter *out)
{
	BloomShape	shape = bloom_shape_compare(a, b);
	const char *hint;
	BloomLabels labels;

	switch (shape)
	{
		case BLOOM_SHAPE_SAME:
		case BLOOM_SHAPE_FOLD_FIRST:
		case BLOOM_SHAPE_FOLD_SECOND:
			if (out)
				bloom_combine_header(out, a, b);
			if (a->family[0] != '\0' && b->family[0] != '\0' &&
				!bloom_labels_equal(&a->labels, &b->labels))
			{
				bloom_combine_labels(a->family, &a->labels, &b->labels,
									 &labels);
				if (out)
					out->labels = labels;
			}
			return shape;
		case BLOOM_SHAPE_FAMILY:
			hint = "A filter holds keys of one family; cast the keys to one type before building the filters.";
			break;
		case BLOOM_SHAPE_NHASHES:
		case BLOOM_SHAPE_SIZE:
			hint = "Build the filters with the same capacity and false-positive rate (bloom_size shows the blocks and hashes they give). Filters whose block counts differ by a whole factor, all else equal, are folded to the smaller.";
			break;
		default:
			hint = "Only filters made with the same layout, hash scheme and seed can be combined.";
			break;
	}
	ereport(ERROR,
			errcode(ERRCODE_DATA_EXCEPTION),
			errmsg("cannot combine bloom filters of different shapes"),
			errdetail("The %s is %s; the %s is %s.",
					  first, shape_string(a), second, shape_string(b)),
			errhint("%s", hint));
	return shape;				/* keep the compiler quiet */
}

/* The row type of a function returning a composite, ready to form tuples. */
TupleDesc
bloom_result_tupdesc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return BlessTupleDesc(tupdesc);
}
