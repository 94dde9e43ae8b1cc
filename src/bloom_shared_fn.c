/*-------------------------------------------------------------------------
 *
 * bloom_shared_fn.c
 *	  The SQL functions of a shared filter without its keys:
 *	  bloom_filter_create, _add, _contains, _info, _export and _drop
 *	  (docs/shared-filters.md; the table in bloom_shared.h).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_shared_fn.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/tuplestore.h"

#include "bloom_shared.h"

/* The keys of an array argument: their key type kept in fn_extra */
static BloomKeyType *
array_key_type(FunctionCallInfo fcinfo)
{
	BloomKeyType *kt = fcinfo->flinfo->fn_extra;

	if (kt == NULL)
	{
		Oid			atype = get_fn_expr_argtype(fcinfo->flinfo, 1);
		Oid			etype = OidIsValid(atype) ? get_element_type(atype) : InvalidOid;

		if (!OidIsValid(etype))
			ereport(ERROR,
					errcode(ERRCODE_DATATYPE_MISMATCH),
					errmsg("could not determine the element type of the keys"));
		kt = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BloomKeyType));
		bloom_key_type_init(kt, etype, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = kt;
	}
	return kt;
}

/* The hashes of an array's elements; isnull[i] for NULL elements */
static uint64 *
array_hashes(ArrayType *a, BloomKeyType *kt, uint64 seed, bool **isnull,
			 int *n)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	Datum	   *elems;
	uint64	   *h;

	get_typlenbyvalalign(ARR_ELEMTYPE(a), &typlen, &typbyval, &typalign);
	deconstruct_array(a, ARR_ELEMTYPE(a), typlen, typbyval, typalign,
					  &elems, isnull, n);
	h = palloc(sizeof(uint64) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		h[i] = (*isnull)[i] ? 0 : bloom_key_hash(kt, elems[i], seed);
	return h;
}

static bool
array_has_key(bool *isnull, int n)
{
	for (int i = 0; i < n; i++)
		if (!isnull[i])
			return true;
	return false;
}

/*
 * bloom_filter_create(name, capacity, false_positive_rate, expansion,
 * nonscaling): the table, its head row and its first layer.
 */
PG_FUNCTION_INFO_V1(bf_filter_create);
Datum
bf_filter_create(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int64		capacity = PG_GETARG_INT64(1);
	double		rate = PG_GETARG_FLOAT8(2);
	int32		expansion = PG_GETARG_INT32(3);
	bool		nonscaling = PG_GETARG_BOOL(4);
	RangeVar   *rv;
	char	   *qname;
	uint64		nblocks;
	int			k;
	BsLayer		first;
	BloomFilter head;
	uint8		buf[BS_HEAD_SIZE];
	Oid			types[1] = {BYTEAOID};
	Datum		v[1];
	bytea	   *b;

	bloom_plan_or_error(capacity, rate, &nblocks, &k);	/* the ranges */
	if (expansion < 1 || expansion > BS_MAX_EXPANSION)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("expansion must be between 1 and %d, not %d",
					   BS_MAX_EXPANSION, expansion));
	if (!bs_plan_layer((uint64) capacity, rate, 0, 0, &first))
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("shared bloom filter for " INT64_FORMAT " keys at false-positive rate %g would be too large",
					   capacity, rate));
#if PG_VERSION_NUM >= 160000
	rv = makeRangeVarFromNameList(stringToQualifiedNameList(name, NULL));
#else
	rv = makeRangeVarFromNameList(stringToQualifiedNameList(name));
#endif
	qname = quote_qualified_identifier(rv->schemaname, rv->relname);
	if (rv->catalogname)
		qname = psprintf("%s.%s", quote_identifier(rv->catalogname), qname);

	SPI_connect();
	if (SPI_execute(psprintf("CREATE TABLE %s (layer pg_catalog.int4 NOT NULL, slice pg_catalog.int4 NOT NULL, "
							 "nkeys pg_catalog.int8 NOT NULL, bits pg_catalog.bytea NOT NULL, "
							 "PRIMARY KEY (layer, slice)) WITH (fillfactor = 50)",
							 qname), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create the table of the shared filter");
	bloom_init_header(&head, (uint64) capacity, rate, first.nblocks, first.k, "");
	bs_make_head(buf, &head, nonscaling ? 0 : (uint32) expansion);
	b = palloc(VARHDRSZ + BS_HEAD_SIZE);
	SET_VARSIZE(b, VARHDRSZ + BS_HEAD_SIZE);
	memcpy(VARDATA(b), buf, BS_HEAD_SIZE);
	v[0] = PointerGetDatum(b);
	if (SPI_execute_with_args(psprintf("INSERT INTO %s VALUES (-1, 0, 1, $1)", qname),
							  1, types, v, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert the head row of the shared filter");
	bs_insert_layer(qname, 0, &first);
	SPI_finish();
	PG_RETURN_OID(RangeVarGetRelid(rv, NoLock, false));
}

/* bloom_filter_add(filter, key): true where the key was surely new */
PG_FUNCTION_INFO_V1(bf_filter_add);
Datum
bf_filter_add(PG_FUNCTION_ARGS)
{
	BloomKeyType *kt = bloom_call_key_type(fcinfo, 1);
	BsFilter	f;
	bool		added;

	SPI_connect();
	bs_open(&f, PG_GETARG_OID(0), false);
	bs_check_key(&f, kt, true);
	added = bs_add_hash(&f, bloom_key_hash(kt, PG_GETARG_DATUM(1), f.head.seed));
	SPI_finish();
	PG_RETURN_BOOL(added);
}

/* bloom_filter_add(filter, keys[]): how many were surely new */
PG_FUNCTION_INFO_V1(bf_filter_add_array);
Datum
bf_filter_add_array(PG_FUNCTION_ARGS)
{
	BloomKeyType *kt = array_key_type(fcinfo);
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(1);
	BsFilter	f;
	bool	   *isnull;
	uint64	   *h;
	int			n,
				m = 0;
	int64		added = 0;

	SPI_connect();
	bs_open(&f, PG_GETARG_OID(0), false);
	h = array_hashes(a, kt, f.head.seed, &isnull, &n);
	if (array_has_key(isnull, n))
	{
		bs_check_key(&f, kt, true);
		for (int i = 0; i < n; i++)
			if (!isnull[i])
				h[m++] = h[i];
		added = bs_add_hashes(&f, h, m);
	}
	SPI_finish();
	PG_RETURN_INT64(added);
}

/* bloom_filter_contains(filter, key) */
PG_FUNCTION_INFO_V1(bf_filter_contains);
Datum
bf_filter_contains(PG_FUNCTION_ARGS)
{
	BloomKeyType *kt = bloom_call_key_type(fcinfo, 1);
	BsFilter	f;
	bool		found = false;

	SPI_connect();
	if (!bs_probe_known(&f, PG_GETARG_OID(0), kt, PG_GETARG_DATUM(1), &found))
	{
		bs_open(&f, PG_GETARG_OID(0), true);
		bs_check_key(&f, kt, false);
		if (f.head.family[0] != '\0')
			found = bs_probe_hash(&f, bloom_key_hash(kt, PG_GETARG_DATUM(1), f.head.seed));
	}
	SPI_finish();
	PG_RETURN_BOOL(found);
}

/* bloom_filter_contains(filter, keys[]): per key, NULL for a NULL key */
PG_FUNCTION_INFO_V1(bf_filter_contains_array);
Datum
bf_filter_contains_array(PG_FUNCTION_ARGS)
{
	BloomKeyType *kt = array_key_type(fcinfo);
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(1);
	MemoryContext outer = CurrentMemoryContext;
	BsFilter	f;
	bool	   *isnull;
	bool	   *pending;
	uint64	   *h;
	int			n;
	Datum	   *res;
	ArrayType  *out;
	int			dims[MAXDIM],
				lbs[MAXDIM],
				ndim = ARR_NDIM(a);

	SPI_connect();
	bs_open(&f, PG_GETARG_OID(0), true);
	h = array_hashes(a, kt, f.head.seed, &isnull, &n);
	pending = palloc(sizeof(bool) * Max(n, 1));
	for (int i = 0; i < n; i++)
		pending[i] = !isnull[i];
	if (f.head.family[0] != '\0' && array_has_key(isnull, n))
	{
		bs_check_key(&f, kt, false);
		for (int i = 0; i < f.nlayers; i++)
			bs_test_layer(&f, i, h, n, pending);
	}
	MemoryContextSwitchTo(outer);
	res = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
		res[i] = BoolGetDatum(!isnull[i] && !pending[i]);
	/* the input's shape: a 2-D array of keys gives a 2-D array of answers */
	for (int i = 0; i < ndim; i++)
	{
		dims[i] = ARR_DIMS(a)[i];
		lbs[i] = ARR_LBOUND(a)[i];
	}
	out = construct_md_array(res, isnull, n > 0 ? ndim : 0, dims, lbs, BOOLOID, 1,
							 true, TYPALIGN_CHAR);
	SPI_finish();
	PG_RETURN_ARRAYTYPE_P(out);
}

/*
 * Every slice row of every layer, in order, checked; fn sees each.  Read
 * through a cursor, so a large filter is never all in memory at once.
 */
typedef void (*slice_fn) (void *arg, int layer, int32 slice, int64 nkeys,
						  const uint8 *bits, int len);

static void
scan_slices(BsFilter *f, slice_fn fn, void *arg)
{
	Portal		portal;
	int			layer = 0;
	int32		next = 0;

	portal = SPI_cursor_open_with_args(NULL,
									   psprintf("SELECT layer, slice, nkeys, bits FROM %s "
												"WHERE layer OPERATOR(pg_catalog.>=) 0 AND slice OPERATOR(pg_catalog.>=) 0 "
												"ORDER BY layer, slice",
												f->plans->qname),
									   0, NULL, NULL, NULL, true, 0);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, 1024);
		if (SPI_processed == 0)
			break;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	t = SPI_tuptable->vals[r];
			TupleDesc	td = SPI_tuptable->tupdesc;
			bool		n1,
						n2,
						n3,
						n4;
			int			l = DatumGetInt32(SPI_getbinval(t, td, 1, &n1));
			int32		s = DatumGetInt32(SPI_getbinval(t, td, 2, &n2));
			int64		k = DatumGetInt64(SPI_getbinval(t, td, 3, &n3));
			Datum		d = SPI_getbinval(t, td, 4, &n4);
			bytea	   *b;

			if (layer < f->nlayers && next == f->layers[layer].nslices)
				layer++, next = 0;
			if (n1 || n2 || n3 || n4 || l != layer || s != next ||
				layer >= f->nlayers)
				bs_corrupt(f, "The slice rows are not those of the filter's layers, each once.");
			b = DatumGetByteaPP(d);
			if (VARSIZE_ANY_EXHDR(b) != bs_slice_bytes(&f->layers[l], s))
				bs_corrupt(f, psprintf("Slice %d of layer %d is not of its length.", s, l));
			fn(arg, l, s, k, (const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
			next++;
		}
		SPI_freetuptable(SPI_tuptable);
	}
	SPI_cursor_close(portal);
	if (layer != f->nlayers - 1 || next != f->layers[layer].nslices)
		bs_corrupt(f, "Some slice rows are missing.");
}

typedef struct InfoSums
{
	int64		keys[BS_MAX_LAYERS];
	uint64		bits_set[BS_MAX_LAYERS];
} InfoSums;

static void
info_slice(void *arg, int layer, int32 slice, int64 nkeys, const uint8 *bits,
		   int len)
{
	InfoSums   *s = arg;

	s->keys[layer] += nkeys;
	s->bits_set[layer] += bloom_popcount(bits, len);
}

/* bloom_filter_info(filter): BF.INFO and BF.CARD */
PG_FUNCTION_INFO_V1(bf_filter_info);
Datum
bf_filter_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = bloom_result_tupdesc(fcinfo);
	MemoryContext outer = CurrentMemoryContext;
	HeapTuple	tuple;
	InfoSums	sums = {{0}};
	BsFilter	f;
	Datum		values[11];
	bool		nulls[11] = {0};
	int64		keys = 0,
				size = 0;
	uint64		bits_set = 0;
	double		est = 0,
				pass = 1.0;

	SPI_connect();
	bs_open(&f, PG_GETARG_OID(0), true);
	scan_slices(&f, info_slice, &sums);
	for (int i = 0; i < f.nlayers; i++)
	{
		BsLayer    *l = &f.layers[i];
		double		e = bloom_estimate_keys(l->nblocks, l->k, sums.bits_set[i]);
		double		fp = bloom_expected_fpr(l->nblocks, l->k, e);

		keys += sums.keys[i];
		bits_set += sums.bits_set[i];
		size += (int64) l->nblocks * BLOOM_BLOCK_BYTES;

		/* a saturated layer's estimate is infinite: its rate is 1 */
		if (!isfinite(e) || isnan(fp))
			fp = 1.0;
		est += e;
		pass *= 1.0 - Min(Max(fp, 0.0), 1.0);
	}
	MemoryContextSwitchTo(outer);
	values[0] = Int64GetDatum((int64) f.head.capacity);
	values[1] = Float8GetDatum(f.head.rate);
	values[2] = Int32GetDatum((int32) f.expansion);
	nulls[2] = f.expansion == 0;
	values[3] = BoolGetDatum(f.expansion == 0);
	values[4] = Int32GetDatum(f.nlayers);
	values[5] = CStringGetTextDatum(f.head.family);
	nulls[5] = f.head.family[0] == '\0';
	values[6] = Int64GetDatum(keys);
	values[7] = Float8GetDatum(est);
	values[8] = Int64GetDatum((int64) bits_set);
	values[9] = Int64GetDatum(size);
	values[10] = Float8GetDatum(1.0 - pass);
	tuple = heap_form_tuple(tupdesc, values, nulls);
	SPI_finish();
	PG_RETURN_DATUM(HeapTupleGetDatum(tuple));
}

typedef struct ExportState
{
	BsFilter   *f;
	bytea	   *layer[BS_MAX_LAYERS];
} ExportState;

static void
export_slice(void *arg, int layer, int32 slice, int64 nkeys, const uint8 *bits,
			 int len)
{
	ExportState *s = arg;

	memcpy(BLOOM_PAYLOAD(s->layer[layer]) + BLOOM_HEADER_SIZE +
		   (Size) slice * BS_SLICE_BYTES, bits, len);
}

/* bloom_filter_export(filter): each layer as a bloom value */
PG_FUNCTION_INFO_V1(bf_filter_export);
Datum
bf_filter_export(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext outer = CurrentMemoryContext;
	ExportState s;
	BsFilter	f;

	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	bs_open(&f, PG_GETARG_OID(0), true);
	s.f = &f;
	MemoryContextSwitchTo(outer);
	for (int i = 0; i < f.nlayers; i++)
		s.layer[i] = bloom_new(f.layers[i].capacity, f.layers[i].rate,
							   f.layers[i].nblocks, f.layers[i].k,
							   f.head.family, &f.head.labels);
	scan_slices(&f, export_slice, &s);
	SPI_finish();
	for (int i = 0; i < f.nlayers; i++)
	{
		Datum		values[2] = {Int32GetDatum(i), PointerGetDatum(s.layer[i])};
		bool		nulls[2] = {0};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* bloom_filter_drop(filter): DROP TABLE, once it is known to be a filter */
PG_FUNCTION_INFO_V1(bf_filter_drop);
Datum
bf_filter_drop(PG_FUNCTION_ARGS)
{
	BsFilter	f;

	SPI_connect();
	bs_open_ex(&f, PG_GETARG_OID(0), false, false);
	if (SPI_execute(psprintf("DROP TABLE %s", f.plans->qname), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not drop the shared filter");
	SPI_finish();
	PG_RETURN_VOID();
}
