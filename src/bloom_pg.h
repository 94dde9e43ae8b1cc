/*-------------------------------------------------------------------------
 *
 * bloom_pg.h
 *	  PostgreSQL glue of the bloom type: fetch macros, key hashing, the
 *	  probe cache, the aggregate's state and the helpers shared by the
 *	  SQL-callable functions, with prototypes grouped by the file that
 *	  defines them.
 *
 * The format itself is described in bloom.h.  (Not "bloomfilter.h":
 * PostgreSQL has a lib/bloomfilter.h of its own.)
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_pg.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_PG_H
#define BLOOM_PG_H

#include "postgres.h"

#include "fmgr.h"
#include "access/tupdesc.h"
#include "nodes/nodes.h"
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#include "varatt.h"			/* split out of postgres.h in 16 */
#else
/*
 * The module is built with -fvisibility=hidden (see the Makefile), so the
 * fmgr functions must be exported explicitly, as 16's fmgr.h does.
 */
#undef PG_FUNCTION_INFO_V1
#define PG_FUNCTION_INFO_V1(funcname) \
extern PGDLLEXPORT Datum funcname(PG_FUNCTION_ARGS); \
extern PGDLLEXPORT const Pg_finfo_record * CppConcat(pg_finfo_,funcname)(void); \
const Pg_finfo_record * \
CppConcat(pg_finfo_,funcname) (void) \
{ \
	static const Pg_finfo_record my_finfo = { 1 }; \
	return &my_finfo; \
} \
extern int no_such_variable
#endif

#include "bloom.h"

/*
 * A bloom value is a plain varlena; bloom.h describes its payload.  The fetch
 * macro detoasts: only bloom_contains avoids it, through its cache.
 */
#define DatumGetBloomP(X)		((bytea *) PG_DETOAST_DATUM(X))
#define PG_GETARG_BLOOM_P(n)	DatumGetBloomP(PG_GETARG_DATUM(n))
#define PG_GETARG_BLOOM_P_COPY(n) ((bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(n)))
#define PG_RETURN_BLOOM_P(x)	PG_RETURN_POINTER(x)

/*
 * Report an input error softly where the caller allows it (PostgreSQL 16 and
 * later: pg_input_is_valid, COPY ... ON_ERROR), else throw.
 */
#if PG_VERSION_NUM >= 160000
#define bloom_ereturn(ctx, ret, ...) ereturn(ctx, ret, __VA_ARGS__)
#else
#define bloom_ereturn(ctx, ret, ...) \
	do { (void) (ctx); ereport(ERROR, __VA_ARGS__); return ret; } while (0)
#endif

#define BLOOM_PAYLOAD(v)		((uint8_t *) VARDATA(v))

/* How a key type is turned into the bytes that are hashed. */
typedef enum BloomKeyKind
{
	KEY_INT2,
	KEY_INT4,
	KEY_INT8,
	KEY_TEXT,					/* text, varchar: the bytes */
	KEY_NAME,					/* name: the bytes up to the NUL */
	KEY_BPCHAR,					/* bytes without trailing blanks */
	KEY_BYTEA,
	KEY_UUID,
	KEY_BOOL,
	KEY_FLOAT4,
	KEY_FLOAT8,
	KEY_NUMERIC,				/* normalized decimal text */
	KEY_INT32,					/* date */
	KEY_INT64,					/* timestamp, timestamptz, time */
	KEY_ENUM,					/* the label, not the OID */
	KEY_GENERIC					/* the type's extended hash function */
} BloomKeyKind;

typedef struct BloomKeyType
{
	Oid			typid;			/* the type as passed, 0 = not set up */
	Oid			collid;
	BloomKeyKind kind;
	bool		utf8;			/* the database encoding is UTF-8 */
	char		family[BLOOM_FAMILY_LEN];
	BloomLabels labels;			/* KEY_ENUM: the type's labels (else 0) */
	BloomLabels oidlabels;		/* KEY_ENUM: the same of (OID, label) pairs,
								 * the guard an index records */
	/* KEY_ENUM only: what bloom_check_labels keeps */
	Oid			enumtypid;		/* the enum (typid may be a domain over it) */
	uint64		labels_gen;		/* pg_enum as of labels (bloom_labels.c) */
	bool		accepted_ok;
	BloomLabels accepted;		/* a guard found to be labels less some
								 * added since */
	FmgrInfo	hashfn;			/* KEY_GENERIC only */
} BloomKeyType;

/* A key of the text family read with another type's input function. */
typedef struct BloomKeyReader
{
	BloomKeyKind argkind;		/* the argument's: KEY_TEXT, KEY_NAME, KEY_BPCHAR */
	Oid			typid;			/* the type it is read as */
	Oid			ioparam;
	FmgrInfo	input;
} BloomKeyReader;

/* bloom_keys.c */
extern void bloom_key_type_init(BloomKeyType *kt, Oid typid, Oid collid,
								MemoryContext mcxt);
extern bool bloom_key_type_try_init(BloomKeyType *kt, Oid typid, Oid collid,
									MemoryContext mcxt);
extern Oid	bloom_call_arg_type(FunctionCallInfo fcinfo, int argno);
extern int	bloom_call_nargs(FunctionCallInfo fcinfo);
extern BloomKeyType *bloom_arg_key_type(FunctionCallInfo fcinfo, int argno,
										BloomKeyType *kt);
extern BloomKeyType *bloom_call_key_type(FunctionCallInfo fcinfo, int argno);
extern void bloom_combine_labels(const char *family, const BloomLabels *a,
								 const BloomLabels *b, BloomLabels *out);
extern const char *bloom_family_display(const char *family);
extern bool bloom_key_reads_as(const BloomKeyType *arg, const char *family);
extern Oid	bloom_family_type(const char *family);
extern void bloom_key_reader_init(BloomKeyReader *r, const BloomKeyType *arg,
								  Oid typid, MemoryContext mcxt);
extern Datum bloom_key_read(BloomKeyReader *r, Datum key);

/* bloom_labels.c */
extern void bloom_labels_read(BloomKeyType *kt, uint64 **hashes, bool byoid);
extern bool bloom_labels_stale(const BloomKeyType *kt);
extern void bloom_labels_refresh(BloomKeyType *kt);
extern bool bloom_check_labels(BloomKeyType *kt, const BloomLabels *stored,
							   const char *indexname);
extern int	bloom_labels_match(BloomKeyType *kt, const BloomLabels *stored,
							   bool byoid);

/* bloom_hash.c */
extern uint64 bloom_key_hash(BloomKeyType *kt, Datum key, uint64 seed);
extern bool bloom_check_key_family(const char *family,
								   const BloomLabels *labels,
								   BloomKeyType *kt, const char *indexname);
extern bool bloom_check_family(const BloomFilter *f, BloomKeyType *kt);

/* bloom_value.c */
extern void *bloom_alloc_big(MemoryContext cxt, Size size, int flags);
extern bytea *bloom_new(uint64 capacity, double rate, uint64 nblocks, int k,
						const char *family, const BloomLabels *labels);
extern void bloom_open(bytea *v, BloomFilter *f);
extern void bloom_plan_or_error(int64 capacity, double rate,
								uint64 *nblocks, int *k);
extern bool bloom_validate(bytea *v, int sqlstate, Node *escontext);
extern BloomShape bloom_check_combinable(const BloomFilter *a,
										 const BloomFilter *b,
										 const char *first,
										 const char *second,
										 BloomFilter *out);
extern const char *bloom_layout_name(uint8 layout);
extern const char *bloom_hash_scheme_name(uint8 scheme);
extern TupleDesc bloom_result_tupdesc(FunctionCallInfo fcinfo);

/*
 * bloom_cache.c: the per-call-site cache of stored filters (bloom_contains).
 * An entry (or a filter from bloom_cache_get_inline) stays valid until the
 * next call of any of these on the same cache.
 */
typedef struct BloomCachedFilter
{
	Oid			toastrelid;
	Oid			valueid;		/* InvalidOid: empty slot */
	bool		family_ok;		/* checked against the call site's key type */
	bool		loaded;			/* f.bits points into the cached copy */
	uint64		slices_left;	/* sliced probes before reading it whole */
	BloomFilter f;
} BloomCachedFilter;

typedef struct BloomCache BloomCache;

extern int	bloom_cache_budget_kb;	/* bloomfilter.cache_budget, in kB */
extern BloomCache *bloom_cache_create(MemoryContext mcxt);
extern BloomCachedFilter *bloom_cache_get(BloomCache *c, struct varlena *ptr);
extern bool bloom_cache_test_unloaded(BloomCache *c, BloomCachedFilter *e,
									  struct varlena *ptr, uint64 h);
extern bytea *bloom_cache_get_inline(BloomCache *c, struct varlena *packed);

/* bloom_agg.c (shared with bloom_setops.c's aggregates) */
extern MemoryContext bloom_agg_context(FunctionCallInfo fcinfo,
									   const char *fname);

/*
 * bloom_agg_state.c: the state of bloom_agg, opaque to the rest (its layout
 * is in bloom_agg_state.h, for the bloom_agg_*.c files that work on it)
 */
typedef struct BloomAggState BloomAggState;

extern BloomAggState *bloom_agg_state_new(MemoryContext cxt,
										  const char *family,
										  const BloomLabels *labels,
										  bool sized,
										  int64 capacity, double rate,
										  double rows_hint);
extern void bloom_agg_state_check_size(const BloomAggState *s,
									   int64 capacity, double rate);
extern bool bloom_agg_state_try_add(BloomAggState *s, uint64 h);
extern void bloom_agg_state_add(BloomAggState *s, MemoryContext cxt, uint64 h);
extern bytea *bloom_agg_state_final(BloomAggState *s, MemoryContext cxt);
extern bool bloom_agg_state_spill_started(BloomAggState *s);
extern void bloom_agg_state_keep_in_memory(BloomAggState *s);
extern void bloom_agg_state_shutdown(Datum arg);

/* bloom_agg_combine.c */
extern BloomAggState *bloom_agg_state_combine(BloomAggState *a,
											  BloomAggState *b,
											  MemoryContext cxt);

/* bloom_agg_serial.c */
extern bytea *bloom_agg_state_serialize(BloomAggState *s, MemoryContext cxt);
extern BloomAggState *bloom_agg_state_deserialize(const uint8 *p, size_t len,
												  MemoryContext cxt);

/*
 * bloom_agg_spill.c: the hash lists of an unsized bloom_agg in temporary
 * files, in BLOOM_SPILL_PARTS partitions by the hashes' top bits
 */
#define BLOOM_SPILL_PARTS	64

typedef struct BloomSpill BloomSpill;

extern BloomSpill *bloom_spill_new(MemoryContext cxt);
extern void bloom_spill_write(BloomSpill *sp, int part, uint64 *h, size_t n);
extern size_t bloom_spill_count(const BloomSpill *sp, int part);
extern void bloom_spill_take(BloomSpill *sp, int part, uint64 *buf);
extern void bloom_spill_put_done(BloomSpill *sp, int part, uint64 *h,
								 size_t n);
extern size_t bloom_spill_read_done(BloomSpill *sp, int part, uint64 *buf,
									size_t max, bool first);
extern void bloom_spill_close(BloomSpill *sp);

/* bloom_agg_plan.c */
extern double bloom_agg_expected_rows(FunctionCallInfo fcinfo);
extern bool bloom_agg_sized_args_without_rows(FunctionCallInfo fcinfo,
											  int64 *capacity, double *rate);

#endif							/* BLOOM_PG_H */
