/*-------------------------------------------------------------------------
 *
 * bloom_shared_batch.c
 *	  Many keys of a shared filter at once (bloom_shared.h): the slices they
 *	  need read in one statement per layer, probed in memory; a batch add
 *	  that locks its slices in slice order, sets the bits in memory and
 *	  writes the changed slices in one UPDATE, growing the filter between
 *	  rounds as single adds do.  Its locks go upwards only (a layer's
 *	  slices, that layer's row, the next layer's slices: grow() in
 *	  bloom_shared.c), so batches and single adds never deadlock.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_shared_batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "bloom_shared.h"

static int
cmp_int32(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

/*
 * The distinct slices of layer "layer" that the pending hashes fall in,
 * sorted: through a map of the layer's slices when the hashes are many
 * beside them, else by sorting.
 */
static int32 *
slices_of(const BsFilter *f, int layer, const uint64 *h, int n,
		  const bool *pending, int *count)
{
	const BsLayer *l = &f->layers[layer];
	int32	   *s = palloc(sizeof(int32) * Max(Min(n, l->nslices), 1));
	int			m = 0,
				u = 0;

	if (n >= l->nslices / 4)
	{
		uint8	   *seen = palloc0(l->nslices);

		for (int i = 0; i < n; i++)
			if (pending[i])
				seen[bloom_block_of(h[i], l->nblocks) / BS_SLICE_BLOCKS] = 1;
		for (int32 j = 0; j < l->nslices; j++)
			if (seen[j])
				s[u++] = j;
		pfree(seen);
		*count = u;
		return s;
	}
	for (int i = 0; i < n; i++)
		if (pending[i])
			s[m++] = (int32) (bloom_block_of(h[i], l->nblocks) / BS_SLICE_BLOCKS);
	qsort(s, m, sizeof(int32), cmp_int32);
	for (int i = 0; i < m; i++)
		if (u == 0 || s[u - 1] != s[i])
			s[u++] = s[i];
	*count = u;
	return s;
}

/*
 * Read slices (sorted, distinct) of a layer into out, each checked; with
 * lock, FOR UPDATE in slice order.
 */
void
bs_read_slices(BsFilter *f, int layer, int32 *slices, int n, bool lock,
			   BsSlices *out)
{
	const BsLayer *l = &f->layers[layer];
	Datum		v[2];
	uint64		got;
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Int32GetDatum(slices[i]);
	v[0] = Int32GetDatum(layer);
	v[1] = PointerGetDatum(construct_array(d, n, INT4OID, 4, true, TYPALIGN_INT));
	got = bs_exec(f, lock ? BS_SLICES_LOCK : BS_SLICES, v);
	if (got != (uint64) n && lock && bs_exec(f, BS_SLICES, v) == (uint64) n)
		bs_not_updated(f, layer, slices[0]);	/* seen, but not to update */
	if (got != (uint64) n)
		bs_corrupt(f, psprintf("Layer %d lacks some of its slices.", layer));
	out->n = n;
	out->slice = slices;
	out->nkeys = palloc(sizeof(int64) * Max(n, 1));
	out->added = palloc0(sizeof(int64) * Max(n, 1));
	out->changed = palloc0(sizeof(bool) * Max(n, 1));
	out->bits = palloc0((Size) BS_SLICE_BYTES * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	td = SPI_tuptable->tupdesc;
		bool		null1,
					null2,
					null3;
		int32		s = DatumGetInt32(SPI_getbinval(t, td, 1, &null1));
		int64		k = DatumGetInt64(SPI_getbinval(t, td, 2, &null2));
		Datum		d = SPI_getbinval(t, td, 3, &null3);
		bytea	   *b;

		if (null1 || null2 || null3 || s != slices[i])
			bs_corrupt(f, psprintf("Layer %d has a row with NULLs or a duplicate slice.", layer));
		b = DatumGetByteaPP(d);
		if (VARSIZE_ANY_EXHDR(b) != bs_slice_bytes(l, s))
			bs_corrupt(f, psprintf("Slice %d of layer %d has %d bytes, not %d.",
								   s, layer, (int) VARSIZE_ANY_EXHDR(b),
								   bs_slice_bytes(l, s)));
		memcpy(out->bits + (Size) i * BS_SLICE_BYTES, VARDATA_ANY(b),
			   VARSIZE_ANY_EXHDR(b));
		out->nkeys[i] = k;
	}
	SPI_freetuptable(SPI_tuptable);
	out->index = NULL;
	if (n >= l->nslices / 64)
	{
		out->index = palloc(sizeof(int32) * l->nslices);
		for (int i = 0; i < n; i++)
			out->index[slices[i]] = i;
	}
}

/* The 64-byte block of hash h in slices read by bs_read_slices */
uint8 *
bs_block_of(const BsFilter *f, int layer, const BsSlices *s, uint64 h,
			int *idx)
{
	uint64		b = bloom_block_of(h, f->layers[layer].nblocks);
	int32		slice = (int32) (b / BS_SLICE_BLOCKS);
	int32	   *at;

	if (s->index)
		*idx = s->index[slice];
	else
	{
		at = bsearch(&slice, s->slice, s->n, sizeof(int32), cmp_int32);
		Assert(at != NULL);
		*idx = (int) (at - s->slice);
	}
	return s->bits + (Size) *idx * BS_SLICE_BYTES +
		(b % BS_SLICE_BLOCKS) * BLOOM_BLOCK_BYTES;
}

/* Clear pending[i] for each hash that layer "layer" may hold. */
void
bs_test_layer(BsFilter *f, int layer, const uint64 *h, int n, bool *pending)
{
	BsSlices	s;
	int			count;
	int32	   *slices = slices_of(f, layer, h, n, pending, &count);
	int			idx;

	if (count == 0)
		return;
	bs_read_slices(f, layer, slices, count, false, &s);
	for (int i = 0; i < n; i++)
		if (pending[i] &&
			bloom_block_test(bs_block_of(f, layer, &s, h[i], &idx),
							 f->layers[layer].k, h[i]))
			pending[i] = false;
}

/* Write the changed slices and their counts in one UPDATE. */
static void
write_slices(BsFilter *f, int layer, const BsSlices *s)
{
	Datum	   *slice = palloc(sizeof(Datum) * Max(s->n, 1));
	Datum	   *bits = palloc(sizeof(Datum) * Max(s->n, 1));
	Datum	   *added = palloc(sizeof(Datum) * Max(s->n, 1));
	Datum		v[4];
	int			m = 0;

	for (int i = 0; i < s->n; i++)
	{
		int			len;
		bytea	   *b;

		if (!s->changed[i])
			continue;
		len = bs_slice_bytes(&f->layers[layer], s->slice[i]);
		b = palloc(VARHDRSZ + len);
		SET_VARSIZE(b, VARHDRSZ + len);
		memcpy(VARDATA(b), s->bits + (Size) i * BS_SLICE_BYTES, len);
		slice[m] = Int32GetDatum(s->slice[i]);
		bits[m] = PointerGetDatum(b);
		added[m++] = Int64GetDatum(s->added[i]);
	}
	if (m == 0)
		return;
	v[0] = Int32GetDatum(layer);
	v[1] = PointerGetDatum(construct_array(slice, m, INT4OID, 4, true, TYPALIGN_INT));
	v[2] = PointerGetDatum(construct_array(bits, m, BYTEAOID, -1, false, TYPALIGN_INT));
	v[3] = PointerGetDatum(construct_array(added, m, INT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
	if (bs_exec(f, BS_WRITE, v) != (uint64) m)
		bs_not_updated(f, layer, s->slice[0]);	/* locked, yet not updated */
}

static int64
layer_count(BsFilter *f, int layer)
{
	Datum		v = Int32GetDatum(layer);
	bool		isnull;
	int64		n;

	if (bs_exec(f, BS_LAYER_ROW, &v) != 1)
		bs_corrupt(f, psprintf("The row of layer %d (slice -1) is missing.", layer));
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
									1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return isnull ? 0 : n;
}

/*
 * One round of a batch add into the newest layer, from hash "start" on,
 * until the layer is full (half of its slices reached their share) or the
 * hashes end; returns where the next round starts.
 */
static int
add_round(BsFilter *f, const uint64 *h, int n, bool *live, int start,
		  int64 *added, bool *can_grow)
{
	int			layer = f->nlayers - 1;
	const BsLayer *l = &f->layers[layer];
	int64		known = layer_count(f, layer);
	int64		threshold = (l->nslices + 1) / 2;
	int32		crossed = 0;
	BsSlices	s;
	int32	   *slices;
	int			count;
	int			i;
	BsLayer		next;

	/*
	 * Where no layer can follow this one, go on in it in one round: a
	 * second round would lock more of its slices after its row.
	 */
	if (*can_grow && !bs_plan_layer(f->head.capacity, f->head.rate,
									f->expansion, layer + 1, &next))
		*can_grow = false;
	if (*can_grow && known >= threshold)
	{
		bs_crossed(f, layer, 0);	/* full already: grow first */
		if (f->nlayers == layer + 1)
			*can_grow = false;
		return start;
	}
	slices = slices_of(f, layer, h + start, n - start, live + start, &count);
	if (count == 0)
		return n;
	bs_read_slices(f, layer, slices, count, true, &s);

	/*
	 * The lock may have waited for another batch's commit: the layer count
	 * and the layers read before it are stale.  Read them again: where
	 * another session added a layer, go to it (the next round); where the
	 * layer filled, grow first; else go on from the count now.
	 */
	{
		int			had = f->nlayers;

		bs_read_head(f);
		if (f->nlayers != had)
			return start;
		known = layer_count(f, layer);
		if (*can_grow && known >= threshold)
		{
			bs_crossed(f, layer, 0);
			if (f->nlayers == layer + 1)
				*can_grow = false;
			return start;
		}
	}
	for (i = start; i < n; i++)
	{
		int			idx;
		uint8	   *blk;

		if (!live[i])
			continue;
		live[i] = false;
		blk = bs_block_of(f, layer, &s, h[i], &idx);
		if (bloom_block_test(blk, l->k, h[i]))
			continue;			/* a key before it in the batch, or racing */
		bloom_set_hash(blk, 1, l->k, h[i]);
		s.nkeys[idx]++;
		s.added[idx]++;
		s.changed[idx] = true;
		(*added)++;
		if (s.nkeys[idx] - 1 < bs_share(l, s.slice[idx]) &&
			s.nkeys[idx] >= bs_share(l, s.slice[idx]))
			crossed++;
		if (*can_grow && known + crossed >= threshold)
		{
			i++;
			break;
		}
	}
	write_slices(f, layer, &s);
	if (crossed > 0)
	{
		bs_crossed(f, layer, crossed);
		if (f->nlayers == layer + 1 && known + crossed >= threshold)
			*can_grow = false;
	}
	return i;
}

/*
 * Add n hashes: those some layer may hold already are not new; the others
 * are set in the newest layer, round by round as it fills.  Returns how
 * many were new.
 */
int64
bs_add_hashes(BsFilter *f, const uint64 *h, int n)
{
	bool	   *live = palloc(sizeof(bool) * Max(n, 1));
	bool		can_grow = f->expansion != 0;
	int64		added = 0;
	int			start = 0;

	memset(live, true, sizeof(bool) * n);
	while (start < n)
	{
		for (int i = 0; i < f->nlayers - 1; i++)
			bs_test_layer(f, i, h + start, n - start, live + start);
		start = add_round(f, h, n, live, start, &added, &can_grow);
	}
	return added;
}
