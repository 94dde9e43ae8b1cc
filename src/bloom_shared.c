/*-------------------------------------------------------------------------
 *
 * bloom_shared.c
 *	  A shared filter's table (bloom_shared.h): the head row checked, the
 *	  saved plans of each filter, one key added or probed, growth; through
 *	  SPI (the caller connects it) as the calling user, so privileges apply.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_shared.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"

#include "bfindex.h"			/* BF_LAYER_RATE: the index's layer plan */
#include "bloom_shared.h"

/* Every name is qualified: a search_path may put look-alikes first. */
#define EQ		"OPERATOR(pg_catalog.=)"
#define PLUS	"OPERATOR(pg_catalog.+)"

static const struct
{
	const char *sql;
	int			nargs;
	Oid			types[4];
}			bs_sql[BS_NPLANS] =
{
	[BS_HEAD] = {"SELECT nkeys, bits FROM %s WHERE layer " EQ " -1 AND slice " EQ " 0", 0},
	[BS_SET_HEAD] = {"UPDATE %s SET bits = $1 WHERE layer " EQ " -1 AND slice " EQ " 0 AND bits " EQ " $2",
	2, {BYTEAOID, BYTEAOID}},
	[BS_SLICE] = {"SELECT bits FROM %s WHERE layer " EQ " $1 AND slice " EQ " $2", 2, {INT4OID, INT4OID}},
	[BS_SLICES] = {"SELECT slice, nkeys, bits FROM %s WHERE layer " EQ " $1 AND slice " EQ " ANY ($2) ORDER BY slice",
	2, {INT4OID, INT4ARRAYOID}},
	[BS_SLICES_LOCK] = {"SELECT slice, nkeys, bits FROM %s WHERE layer " EQ " $1 AND slice " EQ " ANY ($2) ORDER BY slice FOR UPDATE",
	2, {INT4OID, INT4ARRAYOID}},
	[BS_WRITE] = {"UPDATE %s AS t SET bits = u.b, nkeys = t.nkeys " PLUS " u.n FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($4)) AS u(s, b, n) "
	"WHERE t.layer " EQ " $1 AND t.slice " EQ " u.s",
	4, {INT4OID, INT4ARRAYOID, BYTEAARRAYOID, INT8ARRAYOID}},
	[BS_CROSSED] = {"UPDATE %s SET nkeys = nkeys " PLUS " $2 WHERE layer " EQ " $1 AND slice " EQ " -1 RETURNING nkeys",
	2, {INT4OID, INT8OID}},
	[BS_LAYER_ROW] = {"SELECT nkeys FROM %s WHERE layer " EQ " $1 AND slice " EQ " -1", 1, {INT4OID}},
	[BS_HEAD_FIRST] = {"SELECT layer, nkeys, bits FROM %1$s WHERE layer " EQ " -1 AND slice " EQ " 0 "
		"UNION ALL SELECT layer, nkeys, bits FROM %1$s WHERE layer " EQ " 0 AND slice " EQ " $1",
	1, {INT4OID}},
};

static HTAB *bs_plans;			/* relid -> BsPlans, for the backend's life */

/*
 * Layer "layer" of a filter of capacity and rate: capacity * expansion^layer
 * keys at the index's rate for its layer-th layer, so that the layers' rates
 * add up to less than the requested one (bfindex.h).  False where it would
 * be too large.
 */
bool
bs_plan_layer(uint64 capacity, double rate, uint32 expansion, int layer,
			  BsLayer *out)
{
	double		cap = (double) capacity;

	for (int i = 0; i < layer; i++)
		cap *= (double) expansion;
	if (layer >= BS_MAX_LAYERS || cap > (double) BLOOM_MAX_NBLOCKS * BLOOM_BLOCK_BITS)
		return false;
	out->capacity = (uint64) cap;
	out->rate = BF_LAYER_RATE(rate, layer);
	if (!bloom_plan(out->capacity, out->rate, &out->nblocks, &out->k))
		return false;
	out->nslices = (int32) ((out->nblocks + BS_SLICE_BLOCKS - 1) / BS_SLICE_BLOCKS);
	return true;
}

/* The bytes of slice "slice" of a layer: the last one may be short. */
int
bs_slice_bytes(const BsLayer *l, int32 slice)
{
	uint64		left = l->nblocks - (uint64) slice * BS_SLICE_BLOCKS;

	return (int) Min(left, BS_SLICE_BLOCKS) * BLOOM_BLOCK_BYTES;
}

/* A slice's share of its layer's capacity, by its blocks (at least 1). */
int64
bs_share(const BsLayer *l, int32 slice)
{
	double		share = ceil((double) l->capacity * bs_slice_bytes(l, slice) /
							 ((double) l->nblocks * BLOOM_BLOCK_BYTES));

	return Max((int64) share, 1);
}

char *
bs_qualified_name(Oid relid)
{
	char	   *rel = get_rel_name(relid);
	char	   *nsp;

	if (rel == NULL || (nsp = get_namespace_name(get_rel_namespace(relid))) == NULL)
		ereport(ERROR,
				errcode(ERRCODE_UNDEFINED_TABLE),
				errmsg("relation with OID %u does not exist", relid));
	return quote_qualified_identifier(nsp, rel);
}

void
bs_corrupt(const BsFilter *f, const char *detail)
{
	ereport(ERROR,
			errcode(ERRCODE_DATA_CORRUPTED),
			errmsg("shared bloom filter %s is corrupt", f->plans->qname),
			errdetail_internal("%s", detail));
}

/* The plans of a filter; made again when the table was renamed or moved. */
static BsPlans *
get_plans(Oid relid)
{
	char	   *qname = bs_qualified_name(relid);
	BsPlans    *p;
	bool		found;

	if (bs_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(BsPlans);
		bs_plans = hash_create("bloom_filter plans", 16, &ctl,
							   HASH_ELEM | HASH_BLOBS);
	}
	p = (BsPlans *) hash_search(bs_plans, &relid, HASH_ENTER, &found);
	if (found && strcmp(p->qname, qname) != 0)
	{
		for (int i = 0; i < BS_NPLANS; i++)
			if (p->plan[i])
				SPI_freeplan(p->plan[i]);
		for (int i = 0; i <= BLOOM_MAX_K; i++)
			if (p->setbits[i])
				SPI_freeplan(p->setbits[i]);
		pfree(p->qname);
		found = false;
	}
	if (!found)
	{
		memset(p->plan, 0, sizeof(p->plan));
		memset(p->setbits, 0, sizeof(p->setbits));
		p->qname = MemoryContextStrdup(TopMemoryContext, qname);
		p->known = false;
	}
	return p;
}

static SPIPlanPtr
keep_plan(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	return plan;
}

static uint64
exec_plan(BsFilter *f, SPIPlanPtr plan, Datum *values)
{
	int			rc = SPI_execute_plan(plan, values, NULL, f->read_only, 0);

	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/* Run a saved statement of the filter; the rows it processed */
uint64
bs_exec(BsFilter *f, BsPlanId id, Datum *values)
{
	BsPlans    *p = f->plans;

	if (p->plan[id] == NULL)
		p->plan[id] = keep_plan(psprintf(bs_sql[id].sql, p->qname),
								bs_sql[id].nargs, (Oid *) bs_sql[id].types);
	return exec_plan(f, p->plan[id], values);
}

static bytea *
get_bytea(const BsFilter *f, int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc,
								  col, &isnull);

	if (isnull)
		bs_corrupt(f, "A row's bits are NULL.");
	return DatumGetByteaPP(d);
}

static int64
get_int8(const BsFilter *f, int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc,
								  col, &isnull);

	if (isnull)
		bs_corrupt(f, "A row's count is NULL.");
	return DatumGetInt64(d);
}

/*
 * Decode and check the head row: the bloom header (through the format's own
 * validator: it reads only the header, so it is handed the length a value
 * of layer 0's blocks would have), the tail, the layer count, and every
 * layer's geometry recomputed.
 */
static void
decode_head(BsFilter *f, bytea *b, int64 nlayers)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(b);
	uint64		nb;

	if (VARSIZE_ANY_EXHDR(b) != BS_HEAD_SIZE ||
		memcmp(p + BLOOM_HEADER_SIZE, BS_TAIL_MAGIC, 4) != 0)
		bs_corrupt(f, "The head row (layer -1, slice 0) does not hold a shared filter's header.");
	nb = bloom_get_u64(p + BLOOM_OFF_NBLOCKS);
	if (nb < 1 || nb > BLOOM_MAX_NBLOCKS ||
		bloom_read_header_only(p, BLOOM_PAYLOAD_SIZE(nb), &f->head) != BLOOM_OK)
		bs_corrupt(f, "The head row's bloom header is not valid.");
	f->expansion = bloom_get_u32(p + BLOOM_HEADER_SIZE + 4);
	if (f->expansion > BS_MAX_EXPANSION || nlayers < 1 ||
		nlayers > BS_MAX_LAYERS || (f->expansion == 0 && nlayers != 1))
		bs_corrupt(f, "The head row's expansion or layer count is out of range.");
	for (int i = 0; i < nlayers; i++)
		if (!bs_plan_layer(f->head.capacity, f->head.rate, f->expansion, i,
						   &f->layers[i]))
			bs_corrupt(f, "A layer's size is out of range.");
	if (f->layers[0].nblocks != f->head.nblocks ||
		f->layers[0].k != f->head.nhashes)
		bs_corrupt(f, "The head row's block count or hash count is not its capacity's and rate's.");
	memcpy(f->headbytes, p, BS_HEAD_SIZE);
	f->nlayers = (int) nlayers;
}

static void
read_head(BsFilter *f, BsPlanId id)
{
	if (bs_exec(f, id, NULL) != 1)
		bs_corrupt(f, "The head row (layer -1, slice 0) is missing.");
	decode_head(f, get_bytea(f, 0, 2), get_int8(f, 0, 1));
	SPI_freetuptable(SPI_tuptable);
}

/* The head row again, under a new snapshot (an add): the layers now */
void
bs_read_head(BsFilter *f)
{
	read_head(f, BS_HEAD);
}

/*
 * Open the filter whose table is relid: a probe (read_only) runs its
 * statements under the caller's snapshot, an add under a new one each.
 */
void
bs_open(BsFilter *f, Oid relid, bool read_only)
{
	bs_open_ex(f, relid, read_only, true);
}

/* bs_open; without plain, a table with a policy or trigger is accepted */
void
bs_open_ex(BsFilter *f, Oid relid, bool read_only, bool plain)
{
	memset(f, 0, sizeof(*f));
	f->relid = relid;
	f->read_only = read_only;
	bs_check_table(relid, plain);
	f->plans = get_plans(relid);
	read_head(f, BS_HEAD);
	f->plans->first = f->layers[0];
	f->plans->seed = f->head.seed;
	f->plans->known = true;
}

void
bs_make_head(uint8 *buf, const BloomFilter *head, uint32 expansion)
{
	bloom_write_header(buf, head);
	memcpy(buf + BLOOM_HEADER_SIZE, BS_TAIL_MAGIC, 4);
	bloom_put_u32(buf + BLOOM_HEADER_SIZE + 4, expansion);
}

static bytea *
make_bytea(const uint8 *data, int len)
{
	bytea	   *b = (bytea *) palloc0(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (data)
		memcpy(VARDATA(b), data, len);
	return b;
}

/*
 * The head row's first family, in a subtransaction rolled back where another
 * session's first add came first (the UPDATE that waited for it still locks
 * the row, and a batch holding it deadlocked with a grower), or on an error:
 * left open, the subtransaction became what a PL/pgSQL handler rolled back.
 */
static bool
set_head_once(BsFilter *f, Datum *v)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool done = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		done = bs_exec(f, BS_SET_HEAD, v) == 1;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ReThrowError(edata);
	}
	PG_END_TRY();
	if (done)
		ReleaseCurrentSubTransaction();
	else
		RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return done;
}

/*
 * The key's family against the filter's.  The first add (set) records its
 * family in the head row: the UPDATE is made only if the head row is still
 * the one read, and another session's first add that came first is then
 * read and checked against.
 */
void
bs_check_key(BsFilter *f, BloomKeyType *kt, bool set)
{
	BloomFilter head;
	uint8		buf[BS_HEAD_SIZE];
	Datum		v[2];

	if (f->head.family[0] != '\0' || !set)
	{
		(void) bloom_check_key_family(f->head.family, &f->head.labels, kt, NULL);
		return;
	}
	(void) bloom_check_key_family("", &f->head.labels, kt, NULL);	/* labels */
	head = f->head;
	strlcpy(head.family, kt->family, BLOOM_FAMILY_LEN);
	head.labels = kt->labels;
	bs_make_head(buf, &head, f->expansion);
	v[0] = PointerGetDatum(make_bytea(buf, BS_HEAD_SIZE));
	v[1] = PointerGetDatum(make_bytea(f->headbytes, BS_HEAD_SIZE));
	if (set_head_once(f, v))
	{
		f->head = head;
		memcpy(f->headbytes, buf, BS_HEAD_SIZE);
		return;
	}
	read_head(f, BS_HEAD);
	if (f->head.family[0] == '\0')
		bs_corrupt(f, "The head row changed but records no key family.");
	(void) bloom_check_key_family(f->head.family, &f->head.labels, kt, NULL);
}

/* Insert layer "layer"'s row and its zeroed slices. */
void
bs_insert_layer(const char *qname, int layer, const BsLayer *l)
{
	Oid			types[4] = {INT4OID, INT4OID, BYTEAOID, BYTEAOID};
	Datum		v[4];
	int			rc;

	v[0] = Int32GetDatum(layer);
	v[1] = Int32GetDatum(l->nslices);
	v[2] = PointerGetDatum(make_bytea(NULL, BS_SLICE_BYTES));
	v[3] = PointerGetDatum(make_bytea(NULL, bs_slice_bytes(l, l->nslices - 1)));
	rc = SPI_execute_with_args(psprintf("INSERT INTO %s (layer, slice, nkeys, bits) "
										"SELECT $1, -1, 0, ''::pg_catalog.bytea UNION ALL "
										"SELECT $1, s, 0, CASE WHEN s OPERATOR(pg_catalog.<) ($2 OPERATOR(pg_catalog.-) 1) THEN $3 ELSE $4 END "
										"FROM pg_catalog.generate_series(0, $2 OPERATOR(pg_catalog.-) 1) AS s", qname),
							   4, types, v, NULL, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
}

/*
 * Layer "layer" is full: add the next one, unless another session did, the
 * filter has its most layers, or the next would be too large (the keys then
 * go on into the newest layer, whose rate rises: bloom_filter_info shows it).
 *
 * The caller holds the lock of the layer's row (bs_crossed updated it): one
 * session grows it, one that waited reads the head row after the grower's
 * commit and finds the next layer.  The head row is not locked to decide
 * (one that held it going into the new layer's slices deadlocked with one
 * holding them that waited for the head): locks go upwards only, and the
 * head row's UPDATE is made only by the newest layer's one grower.
 */
static void
grow(BsFilter *f, int layer)
{
	BsLayer		next;
	Oid			type = INT8OID;
	Datum		v;

	read_head(f, BS_HEAD);
	if (f->nlayers != layer + 1 ||
		!bs_plan_layer(f->head.capacity, f->head.rate, f->expansion,
					   layer + 1, &next))
		return;
	bs_insert_layer(f->plans->qname, layer + 1, &next);
	v = Int64GetDatum(layer + 2);
	if (SPI_execute_with_args(psprintf("UPDATE %s SET nkeys = $1 WHERE layer " EQ " -1 AND slice " EQ " 0",
									   f->plans->qname),
							  1, &type, &v, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update the head row");
	f->layers[layer + 1] = next;
	f->nlayers = layer + 2;
}

/*
 * n more slices of layer "layer" reached their share: when half of its
 * slices have, its median slice holds its share, so the layer holds about
 * its capacity and the next layer is added.
 */
void
bs_crossed(BsFilter *f, int layer, int32 n)
{
	Datum		v[2];
	int64		crossed;

	v[0] = Int32GetDatum(layer);
	v[1] = Int64GetDatum(n);
	if (bs_exec(f, BS_CROSSED, v) != 1)
		bs_corrupt(f, psprintf("The row of layer %d (slice -1) is missing.", layer));
	crossed = get_int8(f, 0, 1);
	SPI_freetuptable(SPI_tuptable);
	if (f->expansion != 0 && layer == f->nlayers - 1 &&
		crossed >= (f->layers[layer].nslices + 1) / 2)
		grow(f, layer);
}

/* One slice's bits, checked for length */
static const uint8 *
read_slice(BsFilter *f, int layer, int32 slice)
{
	Datum		v[2] = {Int32GetDatum(layer), Int32GetDatum(slice)};
	bytea	   *b;

	if (bs_exec(f, BS_SLICE, v) != 1)
		bs_corrupt(f, psprintf("Slice %d of layer %d is missing.", slice, layer));
	b = get_bytea(f, 0, 1);
	if (VARSIZE_ANY_EXHDR(b) != bs_slice_bytes(&f->layers[layer], slice))
		bs_corrupt(f, psprintf("Slice %d of layer %d has %d bytes, not %d.",
							   slice, layer, (int) VARSIZE_ANY_EXHDR(b),
							   bs_slice_bytes(&f->layers[layer], slice)));
	return (const uint8 *) VARDATA_ANY(b);
}

/* Whether a layer from lo to hi - 1 may hold the key of hash h */
static bool
probe_layers(BsFilter *f, int lo, int hi, uint64 h)
{
	for (int i = hi - 1; i >= lo; i--)
	{
		BsLayer    *l = &f->layers[i];
		uint64		b = bloom_block_of(h, l->nblocks);
		const uint8 *s = read_slice(f, i, (int32) (b / BS_SLICE_BLOCKS));

		if (bloom_block_test(s + (b % BS_SLICE_BLOCKS) * BLOOM_BLOCK_BYTES,
							 l->k, h))
			return true;
	}
	return false;
}

/* Whether some layer may hold the key of hash h */
bool
bs_probe_hash(BsFilter *f, uint64 h)
{
	return probe_layers(f, 0, f->nlayers, h);
}

/*
 * Probe one key in one statement where an earlier call read the filter's
 * layer 0 (its size and seed never change): the head row (checked as
 * bs_open does) and the key's slice of layer 0 together, other layers after.
 * False where the filter or its layer 0 is not the one known.
 */
bool
bs_probe_known(BsFilter *f, Oid relid, BloomKeyType *kt, Datum key,
			   bool *found)
{
	BsPlans    *p;
	uint64		h,
				b;
	Datum		v;
	uint64		n;
	bool		head = false,
				hit = false,
				sliced = false;

	memset(f, 0, sizeof(*f));
	f->relid = relid;
	f->read_only = true;
	bs_check_table(relid, true);
	p = f->plans = get_plans(relid);
	if (!p->known)
		return false;
	h = bloom_key_hash(kt, key, p->seed);
	b = bloom_block_of(h, p->first.nblocks);
	v = Int32GetDatum((int32) (b / BS_SLICE_BLOCKS));
	n = bs_exec(f, BS_HEAD_FIRST, &v);
	for (uint64 r = 0; r < n; r++)
	{
		bool		isnull;
		int32		layer = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[r],
														SPI_tuptable->tupdesc, 1, &isnull));
		bytea	   *bits = get_bytea(f, (int) r, 3);

		if (layer == -1 && !head)
		{
			decode_head(f, bits, get_int8(f, (int) r, 2));
			head = true;
			continue;
		}
		if (VARSIZE_ANY_EXHDR(bits) != bs_slice_bytes(&p->first, DatumGetInt32(v)))
			bs_corrupt(f, "A slice of layer 0 is not of its length.");
		hit = bloom_block_test((const uint8 *) VARDATA_ANY(bits) +
							   (b % BS_SLICE_BLOCKS) * BLOOM_BLOCK_BYTES,
							   p->first.k, h);
		sliced = true;
	}
	if (!head || !sliced || n != 2)
		bs_corrupt(f, "The head row or a slice of layer 0 is missing.");
	if (f->layers[0].nblocks != p->first.nblocks ||
		f->layers[0].k != p->first.k || f->head.seed != p->seed)
	{
		p->known = false;		/* another table of that OID: open it */
		return false;
	}
	bs_check_key(f, kt, false);
	*found = f->head.family[0] != '\0' &&
		(hit || probe_layers(f, 1, f->nlayers, h));
	return true;
}

/*
 * The UPDATE that sets k bits ($3 ..) of a slice unless they are all set
 * already (then no row is updated: the key may be there)
 */
static SPIPlanPtr
setbits_plan(BsPlans *p, int k)
{
	Oid			types[2 + BLOOM_MAX_K];
	const char *set = "bits";
	const char *all = "true";

	if (p->setbits[k])
		return p->setbits[k];
	types[0] = types[1] = INT4OID;
	for (int i = 0; i < k; i++)
	{
		types[2 + i] = INT8OID;
		set = psprintf("pg_catalog.set_bit(%s, $%d, 1)", set, i + 3);
		all = psprintf("%s AND pg_catalog.get_bit(bits, $%d) " EQ " 1", all, i + 3);
	}
	p->setbits[k] = keep_plan(psprintf("UPDATE %s SET bits = %s, nkeys = nkeys " PLUS " 1 "
									   "WHERE layer " EQ " $1 AND slice " EQ " $2 AND NOT (%s) "
									   "RETURNING nkeys", p->qname, set, all),
							  2 + k, types);
	return p->setbits[k];
}

/*
 * Add one key: nothing is written when a layer may hold it (false).  Its
 * bits are set by the UPDATE itself from the row it updates (set_bit), and
 * only where they are not all set: an add re-evaluated on a concurrent
 * add's row keeps both, and finds a concurrent add of the same key.
 */
bool
bs_add_hash(BsFilter *f, uint64 h)
{
	int			newest = f->nlayers - 1;
	BsLayer    *l = &f->layers[newest];
	uint64		b = bloom_block_of(h, l->nblocks);
	int32		slice = (int32) (b / BS_SLICE_BLOCKS);
	uint16		pos[BLOOM_MAX_K];
	Datum		v[2 + BLOOM_MAX_K];

	if (probe_layers(f, 0, newest, h))
		return false;
	bloom_bit_positions(h, l->k, pos);
	v[0] = Int32GetDatum(newest);
	v[1] = Int32GetDatum(slice);
	for (int i = 0; i < l->k; i++)
		v[2 + i] = Int64GetDatum((int64) (b % BS_SLICE_BLOCKS) * BLOOM_BLOCK_BITS + pos[i]);
	if (exec_plan(f, setbits_plan(f->plans, l->k), v) != 1)
	{
		/*
		 * No row updated: its bits were all set, or the row could not be
		 * updated (a policy or a trigger that check_table did not see, as
		 * one added since): then the add would be lost, an error.
		 */
		const uint8 *s = read_slice(f, newest, slice);

		if (!bloom_block_test(s + (b % BS_SLICE_BLOCKS) * BLOOM_BLOCK_BYTES,
							  l->k, h))
			bs_not_updated(f, newest, slice);
		return false;
	}
	if (get_int8(f, 0, 1) == bs_share(l, slice))
		bs_crossed(f, newest, 1);
	return true;
}
