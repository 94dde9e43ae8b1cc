/*-------------------------------------------------------------------------
 *
 * bloom_agg_spill.c
 *	  Temporary files for the hash lists of an unsized bloom_agg that has
 *	  outgrown its memory budget: one logical tape per partition of the
 *	  hashes (by their top bits), appended to while rows come in, and
 *	  rewritten once, without duplicates, when the filter is made.
 *
 * The unsized filter is sized for the exact number of distinct keys, which
 * is known only once every hash is in; its bits cannot be set before.  So
 * the hashes themselves must be kept, at 8 bytes a key, where a filter at
 * 1% takes about 1.2: in memory that is six times the filter, on disk it is
 * a sequential write and two sequential reads.  A partition is 1/64th of
 * the hashes, and of the filter's blocks (the top bits of a hash choose its
 * block, see bloom.h), so it is deduplicated and set in memory of its own
 * size, within the cache's reach of the filter.
 *
 * The tape set lives in the aggregate's memory; its files are closed by
 * bloom_spill_close, which the aggregate's shutdown callback runs (end of
 * the group, rescan, end of the query), or else by the resource owner at
 * the end of the transaction (an error).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg_spill.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/logtape.h"

#include "bloom_pg.h"

struct BloomSpill
{
	MemoryContext cxt;
	LogicalTapeSet *lts;
	LogicalTape *run[BLOOM_SPILL_PARTS];	/* being appended to, or NULL */
	LogicalTape *done[BLOOM_SPILL_PARTS];	/* frozen, no duplicates, or NULL */
	size_t		nrun[BLOOM_SPILL_PARTS];
	size_t		ndone[BLOOM_SPILL_PARTS];
};

/* bytes read from a tape at a time */
#define SPILL_READ_BUFFER	(64 * 1024)

BloomSpill *
bloom_spill_new(MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	BloomSpill *sp = palloc0(sizeof(BloomSpill));

	sp->cxt = cxt;
	sp->lts = LogicalTapeSetCreate(false, NULL, -1);
	MemoryContextSwitchTo(old);
	return sp;
}

/* Append n hashes to partition part. */
void
bloom_spill_write(BloomSpill *sp, int part, uint64 *h, size_t n)
{
	MemoryContext old;

	if (n == 0)
		return;
	old = MemoryContextSwitchTo(sp->cxt);
	if (sp->run[part] == NULL)
		sp->run[part] = LogicalTapeCreate(sp->lts);
	LogicalTapeWrite(sp->run[part], h, n * sizeof(uint64));
	sp->nrun[part] += n;
	MemoryContextSwitchTo(old);
}

/* Hashes held for partition part, duplicates included. */
size_t
bloom_spill_count(const BloomSpill *sp, int part)
{
	return sp->nrun[part] + sp->ndone[part];
}

/* Read n hashes of a tape rewound for reading into buf. */
static void
tape_read(LogicalTape *t, uint64 *buf, size_t n)
{
	size_t		chunk = SPILL_READ_BUFFER / sizeof(uint64);

	for (size_t i = 0; i < n; i += chunk)
	{
		size_t		want = Min(chunk, n - i) * sizeof(uint64);

		CHECK_FOR_INTERRUPTS();
		if (LogicalTapeRead(t, buf + i, want) != want)
			elog(ERROR, "bloom_agg temporary file is shorter than written");
	}
}

/*
 * Read every hash of partition part into buf (room for bloom_spill_count),
 * and forget them: the caller gives them back with bloom_spill_put_done.
 */
void
bloom_spill_take(BloomSpill *sp, int part, uint64 *buf)
{
	MemoryContext old = MemoryContextSwitchTo(sp->cxt);

	if (sp->done[part])
	{
		LogicalTapeRewindForRead(sp->done[part], SPILL_READ_BUFFER);
		tape_read(sp->done[part], buf, sp->ndone[part]);
		LogicalTapeClose(sp->done[part]);
		buf += sp->ndone[part];
	}
	if (sp->run[part])
	{
		LogicalTapeRewindForRead(sp->run[part], SPILL_READ_BUFFER);
		tape_read(sp->run[part], buf, sp->nrun[part]);
		LogicalTapeClose(sp->run[part]);
	}
	sp->done[part] = sp->run[part] = NULL;
	sp->ndone[part] = sp->nrun[part] = 0;
	MemoryContextSwitchTo(old);
}

/*
 * Keep h[0, n), which has no duplicates, as the partition's frozen run: it
 * can be read any number of times (a window aggregate calls the final
 * function again after more rows).
 */
void
bloom_spill_put_done(BloomSpill *sp, int part, uint64 *h, size_t n)
{
	MemoryContext old = MemoryContextSwitchTo(sp->cxt);

	Assert(sp->done[part] == NULL && sp->run[part] == NULL);
	sp->done[part] = LogicalTapeCreate(sp->lts);
	LogicalTapeWrite(sp->done[part], h, n * sizeof(uint64));
	LogicalTapeFreeze(sp->done[part], NULL);
	sp->ndone[part] = n;
	MemoryContextSwitchTo(old);
}

/*
 * The frozen run of partition part, read in pieces: with first set, from
 * its start.  Returns the number of hashes put in buf (at most max), 0 at
 * the end.  The partition must have nothing but its frozen run.
 */
size_t
bloom_spill_read_done(BloomSpill *sp, int part, uint64 *buf, size_t max,
					  bool first)
{
	MemoryContext old;
	size_t		got;

	if (sp->done[part] == NULL)
		return 0;
	old = MemoryContextSwitchTo(sp->cxt);
	if (first)
		LogicalTapeRewindForRead(sp->done[part], SPILL_READ_BUFFER);
	got = LogicalTapeRead(sp->done[part], buf, max * sizeof(uint64));
	MemoryContextSwitchTo(old);
	if (got % sizeof(uint64) != 0)
		elog(ERROR, "bloom_agg temporary file is damaged");
	return got / sizeof(uint64);
}

/* Close the files; the spill must not be used afterwards. */
void
bloom_spill_close(BloomSpill *sp)
{
	if (sp->lts)
		LogicalTapeSetClose(sp->lts);
	sp->lts = NULL;
}
