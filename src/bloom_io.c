/*-------------------------------------------------------------------------
 *
 * bloom_io.c
 *	  Text and binary input/output of the bloom type, and the cast from
 *	  bytea.
 *
 * The text form is the base64 of the payload described in bloom.h, so that
 * text output followed by input gives back the same bytes (pg_dump, COPY,
 * postgres_fdw literals).  The binary form is the payload itself.  Every
 * path that accepts bytes from outside runs bloom_validate().
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_io.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"

#include "bloom_pg.h"

/* how many bytes of a bad literal an error message quotes, at most */
#define QUOTE_MAX 40

/*
 * A filter of hundreds of megabytes takes seconds to convert, so the base64
 * work is done in chunks with a check for interrupts in between: a cancelled
 * COPY or pg_dump stops at once.  CHUNK_BYTES is a multiple of 3, so chunks
 * encode to whole groups of 4 characters.
 */
#define CHUNK_BYTES		((size_t) 3 * 16 * 1024 * 1024)
#define CHUNK_CHARS		(CHUNK_BYTES / 3 * 4)

static bool
decode_chunked(const char *str, size_t slen, uint8 *out)
{
	for (size_t done = 0; done < slen; done += CHUNK_CHARS)
	{
		size_t		n = Min(CHUNK_CHARS, slen - done);

		CHECK_FOR_INTERRUPTS();
		/* padding is allowed only at the very end, not at a chunk's end */
		if (done + n < slen && memchr(str + done, '=', n) != NULL)
			return false;
		if (!bloom_base64_decode(str + done, n, out + done / 4 * 3))
			return false;
	}
	return true;
}

/*
 * Convert the text form (base64 of the payload) to a bloom value.
 */
PG_FUNCTION_INFO_V1(bf_in);
Datum
bf_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	Node	   *escontext = fcinfo->context;
	size_t		slen = strlen(str);
	int			quote = pg_mbcliplen(str, (int) Min(slen, 2 * QUOTE_MAX), QUOTE_MAX);
	size_t		len;
	bytea	   *v;

	if (!bloom_base64_decoded_len(str, slen, &len) ||
		len > BLOOM_PAYLOAD_SIZE(BLOOM_MAX_NBLOCKS))
	{
		bloom_ereturn(escontext, (Datum) 0,
					  errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					  errmsg("invalid input syntax for type bloom: \"%.*s%s\"",
							 quote, str, slen > (size_t) quote ? "..." : ""),
					  errdetail("A bloom literal is the base64 text that bloom output writes; its length must be a multiple of 4 and at most that of the largest filter, but it is %zu.",
								slen));
	}

	v = (bytea *) palloc(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	if (!decode_chunked(str, slen, BLOOM_PAYLOAD(v)))
	{
		bloom_ereturn(escontext, (Datum) 0,
					  errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					  errmsg("invalid input syntax for type bloom: \"%.*s%s\"",
							 quote, str, slen > (size_t) quote ? "..." : ""),
					  errdetail("A bloom literal is base64 (A-Z, a-z, 0-9, +, /) with = padding only at the end."));
	}
	if (!bloom_validate(v, ERRCODE_INVALID_TEXT_REPRESENTATION, escontext))
		PG_RETURN_NULL();
	PG_RETURN_BLOOM_P(v);
}

/*
 * Convert a bloom value to its text form.
 */
PG_FUNCTION_INFO_V1(bf_out);
Datum
bf_out(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	size_t		len = VARSIZE(v) - VARHDRSZ;
	char	   *out;

	/* BLOOM_MAX_NBLOCKS keeps this within MaxAllocSize */
	out = palloc(bloom_base64_encoded_len(len) + 1);
	for (size_t done = 0; done < len; done += CHUNK_BYTES)
	{
		CHECK_FOR_INTERRUPTS();
		bloom_base64_encode(BLOOM_PAYLOAD(v) + done, Min(CHUNK_BYTES, len - done),
							out + done / 3 * 4);
	}
	out[bloom_base64_encoded_len(len)] = '\0';
	PG_RETURN_CSTRING(out);
}

/*
 * Convert the binary form (the payload) to a bloom value.
 */
PG_FUNCTION_INFO_V1(bf_recv);
Datum
bf_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	bytea	   *v;

	if (len < 0 || (size_t) len > BLOOM_PAYLOAD_SIZE(BLOOM_MAX_NBLOCKS))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				errmsg("invalid bloom filter"),
				errdetail("The binary value has %d bytes, more than any bloom filter.", len));
	v = (bytea *) palloc(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	pq_copymsgbytes(buf, (char *) BLOOM_PAYLOAD(v), len);
	bloom_validate(v, ERRCODE_INVALID_BINARY_REPRESENTATION, NULL);
	PG_RETURN_BLOOM_P(v);
}

/*
 * Convert a bloom value to its binary form.
 */
PG_FUNCTION_INFO_V1(bf_send);
Datum
bf_send(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) BLOOM_PAYLOAD(v), VARSIZE(v) - VARHDRSZ);
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/*
 * Cast bytea to bloom: the bytes must be a valid payload, as bloom::bytea
 * produces.
 */
PG_FUNCTION_INFO_V1(bf_from_bytea);
Datum
bf_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BYTEA_P_COPY(0);

	bloom_validate(v, ERRCODE_INVALID_BINARY_REPRESENTATION, NULL);
	PG_RETURN_BLOOM_P(v);
}
