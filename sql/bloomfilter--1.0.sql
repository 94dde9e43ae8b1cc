/* sql/bloomfilter--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bloomfilter" to load this file. \quit

-- bloom type

CREATE TYPE bloom;

CREATE FUNCTION bloom_in(cstring) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_out(bloom) RETURNS cstring
	AS 'MODULE_PATHNAME', 'bf_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_recv(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_send(bloom) RETURNS bytea
	AS 'MODULE_PATHNAME', 'bf_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

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
	AS 'MODULE_PATHNAME', 'bf_from_bytea' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_from_bytea(bytea) IS 'validate bytes written by bloom::bytea and make them a bloom filter';

CREATE CAST (bloom AS bytea) WITHOUT FUNCTION;
CREATE CAST (bytea AS bloom) WITH FUNCTION bloom_from_bytea(bytea);

-- bloom functions

CREATE FUNCTION bloom_create(capacity bigint, false_positive_rate float8 DEFAULT 0.01)
	RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_create' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_create(bigint, float8) IS 'empty bloom filter sized for capacity distinct keys at a false-positive rate of at most false_positive_rate';

-- Functions that take a key of any type are STABLE: an enum key hashes by its
-- label, which ALTER TYPE ... RENAME VALUE changes (the filter's key family
-- then refuses the call), as enum_out is STABLE.  The key is anycompatible so
-- that an untyped literal or NULL is text.  The concrete overloads of
-- bloom_contains and bloom_agg below, for types whose hashing reads no
-- catalog, are IMMUTABLE.
-- not STRICT: a NULL key returns the filter unchanged
CREATE FUNCTION bloom_add(filter bloom, key anycompatible) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_add' LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION bloom_add(bloom, anycompatible) IS 'copy of the filter with the key added';

-- planner support of bloom_contains: its selectivity from the filter's fill
-- and the key column's statistics, and its cost (src/bloom_support.c)
CREATE FUNCTION bloom_contains_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_contains_support' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_contains(filter bloom, key anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_contains' LANGUAGE C STABLE STRICT PARALLEL SAFE
	SUPPORT bloom_contains_support;

COMMENT ON FUNCTION bloom_contains(bloom, anycompatible) IS 'false if the key is surely not in the filter, true if it may be';

-- bloom aggregates

-- support functions are not STRICT: they see the NULL first state and NULL keys
CREATE FUNCTION bloom_agg_trans(internal, anycompatible) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_agg_trans' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_trans(internal, anycompatible, bigint, float8) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_agg_trans' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_final(internal, anycompatible) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_agg_final' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_final(internal, anycompatible, bigint, float8) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_agg_final' LANGUAGE C STABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_agg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME', 'bf_agg_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_agg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The polymorphic forms serve the key types without an overload of their own
-- (see the block "bloom_agg overloads" below); they have no serialize and
-- deserialize functions, on purpose.
CREATE AGGREGATE bloom_agg(key anycompatible) (
	SFUNC = bloom_agg_trans,
	STYPE = internal,
	SSPACE = 1024,
	FINALFUNC = bloom_agg_final,
	FINALFUNC_EXTRA,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE bloom_agg(anycompatible) IS 'bloom filter of the non-null keys, sized for the number of distinct keys at a false-positive rate of 0.01';

CREATE AGGREGATE bloom_agg(key anycompatible, capacity bigint, false_positive_rate float8) (
	SFUNC = bloom_agg_trans,
	STYPE = internal,
	SSPACE = 1024,
	FINALFUNC = bloom_agg_final,
	FINALFUNC_EXTRA,
	COMBINEFUNC = bloom_agg_combine,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE bloom_agg(anycompatible, bigint, float8) IS 'bloom filter of the non-null keys with the size of bloom_create(capacity, false_positive_rate)';

-- ---------------------------------------------------------------------------
-- bloom_agg and bloom_contains overloads: one per common key type
--
-- Distributed engines run an aggregate on their workers only where its
-- argument types are concrete: Citus calls the support functions through its
-- own worker_partial_agg / coord_combine_agg wrappers, checks that each
-- argument's type equals the aggregate's declared one (never true for
-- anycompatible) and passes no call expression, so the key type cannot be
-- learned from the call.  These overloads have concrete signatures down to
-- their transition and final functions, whose declared key type the C code
-- reads (bloom_call_arg_type); with serialize and deserialize functions they
-- run as partial aggregates on Citus workers (Citus 15 and later) and in
-- parallel workers.
--
-- The polymorphic forms above keep every other key type (enums, inet, ranges,
-- arrays, user types) working.  They have no serialize function, so that
-- Citus gathers their rows to the coordinator instead of pushing down a call
-- its type check would refuse; the price is no parallel workers for those key
-- types.  bloom_contains has the same overloads, IMMUTABLE because hashing
-- these types reads no catalog (so postgres_fdw ships them to the remote
-- server).  Overload resolution: a column of exactly one of these types (or a
-- domain over one) takes its overload; varchar, char(n) and name take the
-- text one, unknown literals too (the same family and bytes); a key
-- relabelled by an implicit binary cast (citext to text) is still hashed as
-- its own type (bloom_call_arg_type), so citext is refused, not hashed as
-- text: its "=" ignores case; "char" has an overload only so that it
-- is not ambiguous (it stays a generic key); every other type matches the
-- polymorphic form, as before.
-- ---------------------------------------------------------------------------
DO $overloads$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['smallint', 'integer', 'bigint', 'text', 'bytea',
		'uuid', 'boolean', 'real', 'double precision', 'numeric', 'date',
		'timestamp', 'timestamptz', 'time', '"char"']
	LOOP
		EXECUTE format($f$
			CREATE FUNCTION bloom_agg_trans(internal, %1$s) RETURNS internal
				AS 'MODULE_PATHNAME', 'bf_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
			CREATE FUNCTION bloom_agg_trans(internal, %1$s, bigint, float8) RETURNS internal
				AS 'MODULE_PATHNAME', 'bf_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;
			CREATE FUNCTION bloom_agg_final(internal, %1$s) RETURNS bloom
				AS 'MODULE_PATHNAME', 'bf_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
			CREATE FUNCTION bloom_agg_final(internal, %1$s, bigint, float8) RETURNS bloom
				AS 'MODULE_PATHNAME', 'bf_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
			CREATE AGGREGATE bloom_agg(key %1$s) (
				SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 1024,
				FINALFUNC = bloom_agg_final, FINALFUNC_EXTRA,
				COMBINEFUNC = bloom_agg_combine,
				SERIALFUNC = bloom_agg_serialize, DESERIALFUNC = bloom_agg_deserialize,
				PARALLEL = SAFE);
			CREATE AGGREGATE bloom_agg(key %1$s, capacity bigint, false_positive_rate float8) (
				SFUNC = bloom_agg_trans, STYPE = internal, SSPACE = 1024,
				FINALFUNC = bloom_agg_final, FINALFUNC_EXTRA,
				COMBINEFUNC = bloom_agg_combine,
				SERIALFUNC = bloom_agg_serialize, DESERIALFUNC = bloom_agg_deserialize,
				PARALLEL = SAFE);
			CREATE FUNCTION bloom_contains(filter bloom, key %1$s) RETURNS boolean
				AS 'MODULE_PATHNAME', 'bf_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
				SUPPORT bloom_contains_support;
			COMMENT ON FUNCTION bloom_contains(bloom, %1$s) IS %4$L;
			COMMENT ON AGGREGATE bloom_agg(%1$s) IS %2$L;
			COMMENT ON AGGREGATE bloom_agg(%1$s, bigint, float8) IS %3$L;
			$f$, t,
			'bloom filter of the non-null keys, sized for the number of distinct keys at a false-positive rate of 0.01',
			'bloom filter of the non-null keys with the size of bloom_create(capacity, false_positive_rate)',
			'false if the key is surely not in the filter, true if it may be');
	END LOOP;
END
$overloads$;
-- end of the overloads

-- combining filters: union and intersection

CREATE FUNCTION bloom_union(a bloom, b bloom) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_union' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_union(bloom, bloom) IS 'filter holding every key of either filter (bitwise OR); bit for bit the filter built over all their keys';

CREATE FUNCTION bloom_intersect(a bloom, b bloom) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_intersect' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_intersect(bloom, bloom) IS 'filter holding every key of both filters (bitwise AND); may also answer maybe for some keys of only one';

CREATE OPERATOR | (
	LEFTARG = bloom,
	RIGHTARG = bloom,
	FUNCTION = bloom_union,
	COMMUTATOR = |
);

COMMENT ON OPERATOR | (bloom, bloom) IS 'union of two bloom filters';

CREATE OPERATOR & (
	LEFTARG = bloom,
	RIGHTARG = bloom,
	FUNCTION = bloom_intersect,
	COMMUTATOR = &
);

COMMENT ON OPERATOR & (bloom, bloom) IS 'intersection of two bloom filters';

-- support functions are not STRICT: they see the NULL first state and skip
-- NULL filters
CREATE FUNCTION bloom_union_agg_trans(internal, bloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_union_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_intersect_agg_trans(internal, bloom) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_intersect_agg_trans' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_union_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_union_agg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_intersect_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_intersect_agg_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_setop_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME', 'bf_setop_agg_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_setop_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME', 'bf_setop_agg_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bloom_union_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_union_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION bloom_intersect_agg_final(internal) RETURNS bloom
	AS 'MODULE_PATHNAME', 'bf_intersect_agg_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- SSPACE: the state is a whole filter; 64 kB is one of about 50,000 keys at
-- a rate of 0.01
CREATE AGGREGATE bloom_union_agg(bloom) (
	SFUNC = bloom_union_agg_trans,
	STYPE = internal,
	SSPACE = 65536,
	FINALFUNC = bloom_union_agg_final,
	COMBINEFUNC = bloom_union_agg_combine,
	SERIALFUNC = bloom_setop_agg_serialize,
	DESERIALFUNC = bloom_setop_agg_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE bloom_union_agg(bloom) IS 'union of the non-null filters; NULL over no filters';

CREATE AGGREGATE bloom_intersect_agg(bloom) (
	SFUNC = bloom_intersect_agg_trans,
	STYPE = internal,
	SSPACE = 65536,
	FINALFUNC = bloom_intersect_agg_final,
	COMBINEFUNC = bloom_intersect_agg_combine,
	SERIALFUNC = bloom_setop_agg_serialize,
	DESERIALFUNC = bloom_setop_agg_deserialize,
	PARALLEL = SAFE
);

COMMENT ON AGGREGATE bloom_intersect_agg(bloom) IS 'intersection of the non-null filters; NULL over no filters';

-- equality, and a hash operator class for DISTINCT, GROUP BY, UNION and hash
-- joins

CREATE FUNCTION bloom_eq(a bloom, b bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_eq(bloom, bloom) IS 'true if the filters have the same header and bits';

CREATE FUNCTION bloom_ne(a bloom, b bloom) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_ne(bloom, bloom) IS 'true if the filters differ in header or bits';

CREATE FUNCTION bloom_value_hash(bloom) RETURNS integer
	AS 'MODULE_PATHNAME', 'bf_value_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_value_hash(bloom) IS 'hash of a whole filter value, for the hash operator class';

CREATE FUNCTION bloom_value_hash_extended(bloom, bigint) RETURNS bigint
	AS 'MODULE_PATHNAME', 'bf_value_hash_extended' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_value_hash_extended(bloom, bigint) IS 'seeded 64-bit hash of a whole filter value, for the hash operator class';

CREATE OPERATOR = (
	LEFTARG = bloom,
	RIGHTARG = bloom,
	FUNCTION = bloom_eq,
	COMMUTATOR = =,
	NEGATOR = <>,
	RESTRICT = eqsel,
	JOIN = eqjoinsel,
	HASHES
);

COMMENT ON OPERATOR = (bloom, bloom) IS 'same header and bits';

CREATE OPERATOR <> (
	LEFTARG = bloom,
	RIGHTARG = bloom,
	FUNCTION = bloom_ne,
	COMMUTATOR = <>,
	NEGATOR = =,
	RESTRICT = neqsel,
	JOIN = neqjoinsel
);

COMMENT ON OPERATOR <> (bloom, bloom) IS 'different header or bits';

CREATE OPERATOR CLASS bloom_ops
	DEFAULT FOR TYPE bloom USING hash AS
	OPERATOR 1 = (bloom, bloom),
	FUNCTION 1 bloom_value_hash(bloom),
	FUNCTION 2 bloom_value_hash_extended(bloom, bigint);

-- inspecting and estimating

CREATE FUNCTION bloom_info(filter bloom,
	OUT version integer,
	OUT layout text,
	OUT hash_scheme text,
	OUT nblocks bigint,
	OUT nbits bigint,
	OUT nbytes bigint,
	OUT nhashes integer,
	OUT seed numeric,
	OUT key_family text,
	OUT design_capacity bigint,
	OUT design_false_positive_rate float8,
	OUT bits_set bigint,
	OUT fill_ratio float8,
	OUT estimated_keys float8,
	OUT current_false_positive_rate float8,
	OUT over_capacity boolean)
	AS 'MODULE_PATHNAME', 'bf_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_info(bloom) IS 'header of the filter, its fill, the estimated number of keys, the current false-positive rate, and whether it is over its design capacity';

CREATE FUNCTION bloom_cardinality(filter bloom) RETURNS float8
	AS 'MODULE_PATHNAME', 'bf_cardinality' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_cardinality(bloom) IS 'estimated number of distinct keys in the filter, from its fill';

CREATE FUNCTION bloom_false_positive_rate(filter bloom) RETURNS float8
	AS 'MODULE_PATHNAME', 'bf_false_positive_rate' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_false_positive_rate(bloom) IS 'probability that the filter reports a key it never got as present, from its bits';

CREATE FUNCTION bloom_union_cardinality(a bloom, b bloom) RETURNS float8
	AS 'MODULE_PATHNAME', 'bf_union_cardinality' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_union_cardinality(bloom, bloom) IS 'estimated number of distinct keys in either filter';

CREATE FUNCTION bloom_intersect_cardinality(a bloom, b bloom) RETURNS float8
	AS 'MODULE_PATHNAME', 'bf_intersect_cardinality' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_intersect_cardinality(bloom, bloom) IS 'estimated number of distinct keys in both filters, as |A| + |B| - |A union B|';

CREATE FUNCTION bloom_size(capacity bigint, false_positive_rate float8 DEFAULT 0.01,
	OUT nbytes bigint,
	OUT nbits bigint,
	OUT nhashes integer,
	OUT nblocks bigint,
	OUT expected_false_positive_rate float8)
	AS 'MODULE_PATHNAME', 'bf_size' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_size(bigint, float8) IS 'size in bytes and bits, hash count and blocks of bloom_create(capacity, false_positive_rate), and its expected rate at capacity';

-- adding with a report

-- not STRICT: a NULL key returns the filter unchanged and added false
CREATE FUNCTION bloom_add_new(INOUT filter bloom, key anycompatible, OUT added boolean)
	AS 'MODULE_PATHNAME', 'bf_add_new' LANGUAGE C STABLE PARALLEL SAFE;

COMMENT ON FUNCTION bloom_add_new(bloom, anycompatible) IS 'copy of the filter with the key added, and whether the key was surely new (some bit changed)';

-- bloomfilter index access method

-- The handler takes internal, so SQL cannot call it; PostgreSQL calls it
-- when it opens an index of the access method.
CREATE FUNCTION bf_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME', 'bf_handler' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bf_handler(internal) IS 'index access method handler of bloomfilter';

CREATE ACCESS METHOD bloomfilter TYPE INDEX HANDLER bf_handler;

COMMENT ON ACCESS METHOD bloomfilter IS 'live Bloom filter of a key column, kept current on every write; probed with bloom_index_contains, never scanned';

-- One operator class for every type: the access method hashes keys itself,
-- as the bloom type does, from the type of the index column (and refuses
-- the same types).  No operators, so the planner never scans the index.
CREATE OPERATOR CLASS bloomfilter_ops
	DEFAULT FOR TYPE anyelement USING bloomfilter AS
	STORAGE anyelement;

CREATE FUNCTION bloom_index_contains(index regclass, key anycompatible) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_index_contains'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_index_contains(regclass, anycompatible) IS 'false if no row of the bloomfilter index''s table (any partition) holds the key, true if one may';

CREATE FUNCTION bloom_index_partitions(index regclass, key anycompatible) RETURNS SETOF regclass
	AS 'MODULE_PATHNAME', 'bf_index_partitions'
	LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 1;

COMMENT ON FUNCTION bloom_index_partitions(regclass, anycompatible) IS 'the tables (partitions) whose bloomfilter index may hold the key';

CREATE FUNCTION bloom_index_info(index regclass,
	OUT indexrelid regclass, OUT capacity bigint, OUT false_positive_rate float8,
	OUT layers integer, OUT size_bytes bigint, OUT estimated_keys float8,
	OUT expected_rate float8, OUT live_rows float8, OUT stale_fraction float8,
	OUT advice text)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bf_index_info'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_index_info(regclass) IS 'capacity, rate, layers, size, estimated keys, expected false-positive rate, staleness of a bloomfilter index, and what to do when it is larger or slower than its keys need (one row per partition''s index)';

CREATE FUNCTION bloom_index_filters(index regclass,
	OUT indexrelid regclass, OUT layer integer, OUT filter bloom)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bf_index_filters'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_index_filters(regclass) IS 'each layer of a bloomfilter index (of each partition''s index) as a bloom value, byte for byte what bloom_agg(key, capacity, rate) makes of the same keys at the layer''s capacity and rate';

CREATE FUNCTION bloom_index_verify(index regclass) RETURNS bigint
	AS 'MODULE_PATHNAME', 'bf_index_verify'
	LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION bloom_index_verify(regclass) IS 'number of live rows whose key the bloomfilter index does not report present (0: no false negatives)';

-- Shared filters without their keys (docs/shared-filters.md).  A filter is a
-- table of slices of its bits that bloom_filter_create makes, owned by its
-- caller and not a member of the extension, so that pg_dump keeps its bits
-- and GRANT/REVOKE decide who adds (UPDATE) and probes (SELECT).  Adds write
-- rows (VOLATILE, PARALLEL UNSAFE); probes read them under the statement's
-- snapshot through SPI, which a parallel worker may do (STABLE, PARALLEL
-- SAFE).  The one-key forms take anynonarray so that an array goes to the
-- batch forms; their text overloads make an untyped literal text (else it
-- would match both forms).
CREATE FUNCTION bloom_filter_create(name text, capacity bigint,
	false_positive_rate float8 DEFAULT 0.01, expansion integer DEFAULT 2,
	nonscaling boolean DEFAULT false) RETURNS regclass
	AS 'MODULE_PATHNAME', 'bf_filter_create'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION bloom_filter_create(text, bigint, float8, integer, boolean) IS 'make a shared filter without its keys: a table of the given (schema-qualified) name holding a Bloom filter for capacity keys, growing by layers expansion times larger unless nonscaling (RedisBloom''s BF.RESERVE)';

CREATE FUNCTION bloom_filter_add(name regclass, key anynonarray) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_filter_add'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION bloom_filter_add(regclass, anynonarray) IS 'add the key to the shared filter; true if it was surely new (BF.ADD)';

CREATE FUNCTION bloom_filter_add(name regclass, key text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_filter_add'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION bloom_filter_add(regclass, text) IS 'add the key to the shared filter; true if it was surely new (BF.ADD)';

CREATE FUNCTION bloom_filter_add(name regclass, keys anyarray) RETURNS bigint
	AS 'MODULE_PATHNAME', 'bf_filter_add_array'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION bloom_filter_add(regclass, anyarray) IS 'add the keys (NULLs skipped) to the shared filter; how many were surely new (BF.MADD)';

CREATE FUNCTION bloom_filter_contains(name regclass, key anynonarray) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_filter_contains'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_filter_contains(regclass, anynonarray) IS 'false if the key was surely never added to the shared filter, true if it may have been (BF.EXISTS)';

CREATE FUNCTION bloom_filter_contains(name regclass, key text) RETURNS boolean
	AS 'MODULE_PATHNAME', 'bf_filter_contains'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_filter_contains(regclass, text) IS 'false if the key was surely never added to the shared filter, true if it may have been (BF.EXISTS)';

CREATE FUNCTION bloom_filter_contains(name regclass, keys anyarray) RETURNS boolean[]
	AS 'MODULE_PATHNAME', 'bf_filter_contains_array'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_filter_contains(regclass, anyarray) IS 'bloom_filter_contains of each key, NULL for a NULL key (BF.MEXISTS)';

CREATE FUNCTION bloom_filter_info(name regclass,
	OUT capacity bigint, OUT false_positive_rate float8, OUT expansion integer,
	OUT nonscaling boolean, OUT layers integer, OUT key_family text,
	OUT keys bigint, OUT estimated_keys float8, OUT bits_set bigint,
	OUT size_bytes bigint, OUT expected_rate float8)
	RETURNS record
	AS 'MODULE_PATHNAME', 'bf_filter_info'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_filter_info(regclass) IS 'capacity, rate, expansion, layers, key family, keys counted by adds and estimated from the bits, size and expected false-positive rate of a shared filter (BF.INFO, BF.CARD)';

CREATE FUNCTION bloom_filter_export(name regclass, OUT layer integer, OUT filter bloom)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME', 'bf_filter_export'
	LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_filter_export(regclass) IS 'each layer of a shared filter as a bloom value, byte for byte what bloom_agg(key, capacity, rate) makes of the same keys at the layer''s capacity and rate';

CREATE FUNCTION bloom_filter_drop(name regclass) RETURNS void
	AS 'MODULE_PATHNAME', 'bf_filter_drop'
	LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION bloom_filter_drop(regclass) IS 'drop a shared filter''s table (DROP TABLE, once it is known to be one)';
