/*-------------------------------------------------------------------------
 *
 * bfxlog.c
 *	  WAL of an insert into a bloomfilter index: the bytes of one 64-byte
 *	  block that changed, as a generic WAL record.
 *
 * An extension that is not preloaded has only generic WAL (RM_GENERIC_ID,
 * replayed by PostgreSQL's generic_redo) to make its pages crash-safe and
 * replicated.  GenericXLogStart/Finish find what changed by copying the
 * whole 8 kB page and comparing it byte by byte with the original, which
 * costs more than the rest of an insert together.  Inserts know what they
 * changed (a few bytes of some blocks), so they write the record themselves, in
 * the format generic_redo reads (src/backend/access/transam/generic_xlog.c,
 * unchanged since PostgreSQL 9.6): per registered buffer, a sequence of
 * fragments, each an OffsetNumber offset into the page, an OffsetNumber
 * length and that many bytes.  Like GenericXLogFinish it registers the
 * buffer REGBUF_STANDARD, so that a full-page image replaces the delta
 * after a checkpoint, and it merges fragments closer than a fragment
 * header, as GenericXLog does.  Redo then zeroes the hole between pd_lower
 * and pd_upper, which a bitmap page does not have (pd_lower is BLCKSZ).
 *
 * Builds and growth write whole pages and keep GenericXLog (bfbuild.c).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfxlog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/rmgr.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "utils/rel.h"

#include "bfindex.h"

/* generic_xlog.c's fragment header: offset and length, OffsetNumber each */
#define BF_FRAGMENT_HEADER	(2 * sizeof(OffsetNumber))

/*
 * The fragments that turn old into new (both blocks of 64 bytes at page
 * offset base) into out; returns their size.  Runs of equal bytes shorter
 * than a fragment header do not split a fragment.
 */
static size_t
bf_block_delta(const uint8 *old, const uint8 *new, size_t base, char *out)
{
	size_t		len = 0;
	int			i = 0;

	while (i < BLOOM_BLOCK_BYTES)
	{
		int			start;
		int			end;
		OffsetNumber v;

		if (old[i] == new[i])
		{
			i++;
			continue;
		}
		start = i;
		end = i + 1;			/* one past the last differing byte */
		for (i = end; i < BLOOM_BLOCK_BYTES; i++)
		{
			if (old[i] != new[i])
				end = i + 1;
			else if (i - end >= (int) BF_FRAGMENT_HEADER)
				break;
		}
		v = (OffsetNumber) (base + start);
		memcpy(out + len, &v, sizeof(v));
		v = (OffsetNumber) (end - start);
		memcpy(out + len + sizeof(v), &v, sizeof(v));
		memcpy(out + len + BF_FRAGMENT_HEADER, new + start, end - start);
		len += BF_FRAGMENT_HEADER + (end - start);
		i = end;
	}
	return len;
}

/* the most a block's fragments take: one per changed byte, at worst */
#define BF_BLOCK_DELTA_MAX	(BLOOM_BLOCK_BYTES / 2 * (BF_FRAGMENT_HEADER + 1) + BLOOM_BLOCK_BYTES)

/*
 * Replace n blocks of the bits of buf's page (pinned and exclusively
 * locked), at the offsets offs[] (ascending) in the page's bits, with the
 * 64-byte blocks of newblks, and WAL-log the bytes that changed, in one
 * record.
 */
void
bf_log_blocks(Relation index, Buffer buf, int n, const size_t *offs,
			  const uint8 *newblks)
{
	static char delta[BF_BLOCKS_PER_PAGE * BF_BLOCK_DELTA_MAX];
	Page		page = BufferGetPage(buf);
	size_t		len = 0;
	bool		wal = RelationNeedsWAL(index);

	if (wal)
		for (int i = 0; i < n; i++)
		{
			uint8	   *blk = BfPageGetBits(page) + offs[i];

			len += bf_block_delta(blk, newblks + (size_t) i * BLOOM_BLOCK_BYTES,
								  (size_t) (blk - (uint8 *) page), delta + len);
		}

	START_CRIT_SECTION();
	for (int i = 0; i < n; i++)
		memcpy(BfPageGetBits(page) + offs[i], newblks + (size_t) i * BLOOM_BLOCK_BYTES,
			   BLOOM_BLOCK_BYTES);
	MarkBufferDirty(buf);
	if (wal)
	{
		XLogRecPtr	recptr;

		XLogBeginInsert();
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, delta, len);
		recptr = XLogInsert(RM_GENERIC_ID, 0);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
}
