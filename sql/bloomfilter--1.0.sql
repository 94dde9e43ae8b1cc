/* sql/bloomfilter--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bloomfilter" to load this file. \quit

-- bloom type

CREATE TYPE bloom;

CREATE FUNCTION bloom_in(cstring) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_out(bloom) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_recv(internal) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_send(bloom) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- STORAGE external: the bits are incompressible, and an uncompressed
-- out-of-line value can be read in slices
CREATE TYPE bloom (
	INPUT = bloom_in,
	OUTPUT = bloom_out,
	RECEIVE = bloom_recv,
	SEND = bloom_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = int4,
	STORAGE = external
);

COMMENT ON TYPE bloom IS 'Bloom filter: a set of keys that answers "surely absent" or "maybe present"';

-- casts

CREATE FUNCTION bloom_from_bytea(bytea) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_from_bytea(bytea) IS 'validate bytes written by bloom::bytea and make them a bloom filter';

CREATE CAST (bloom AS bytea) WITHOUT FUNCTION;
CREATE CAST (bytea AS bloom) WITH FUNCTION bloom_from_bytea(bytea);

-- bloom functions

CREATE FUNCTION bloom_create(capacity bigint, false_positive_rate float8 DEFAULT 0.01)
	RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_create(bigint, float8) IS 'empty bloom filter sized for capacity distinct keys at a false-positive rate of at most false_positive_rate';

-- not STRICT: a NULL key returns the filter unchanged
CREATE FUNCTION bloom_add(filter bloom, key anyelement) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION bloom_add(bloom, anyelement) IS 'copy of the filter with the key added';

CREATE FUNCTION bloom_contains(filter bloom, key anyelement) RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_contains(bloom, anyelement) IS 'false if the key is surely not in the filter, true if it may be';

-- bloom aggregates

-- support functions are not STRICT: they see the NULL first state and NULL keys
CREATE FUNCTION bloom_agg_trans(internal, anyelement) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_trans(internal, anyelement, bigint, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_final(internal, anyelement) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_final(internal, anyelement, bigint, float8) RETURNS bloom
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE bloom_agg(key anyelement) (
	SFUNC = bloom_agg_trans,
	STYPE = internal,
	SSPACE = 1024,
	FINALFUNC = bloom_agg_final,
	FINALFUNC_EXTRA,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serialize,
	DESERIALFUNC = bloom_agg_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE bloom_agg(anyelement) IS 'bloom filter of the non-null keys, sized for the number of distinct keys at a false-positive rate of 0.01';

CREATE AGGREGATE bloom_agg(key anyelement, capacity bigint, false_positive_rate float8) (
	SFUNC = bloom_agg_trans,
	STYPE = internal,
	SSPACE = 1024,
	FINALFUNC = bloom_agg_final,
	FINALFUNC_EXTRA,
	COMBINEFUNC = bloom_agg_combine,
	SERIALFUNC = bloom_agg_serialize,
	DESERIALFUNC = bloom_agg_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE bloom_agg(anyelement, bigint, float8) IS 'bloom filter of the non-null keys with the size of bloom_create(capacity, false_positive_rate)';
