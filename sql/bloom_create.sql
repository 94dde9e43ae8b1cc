--
-- bloom_create: arguments, their errors, and the sizes they give.
--
\set VERBOSITY default
SET extra_float_digits = 0;

-- the header fields that sizing fills in
CREATE FUNCTION nhashes(f bloom) RETURNS int
LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT get_byte(f::bytea, 7) $$;
CREATE FUNCTION nblocks(f bloom) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT sum(get_byte(f::bytea, 16 + i)::numeric * 256::numeric ^ i)::numeric(21, 0)
  FROM generate_series(0, 7) AS i
$$;

--
-- Capacity must be at least 1
--
SELECT bloom_create(0);
SELECT bloom_create(-1);
SELECT bloom_create(-9223372036854775808, 0.01);

--
-- The rate must lie strictly between 0 and 1
--
SELECT bloom_create(1000, 0);
SELECT bloom_create(1000, 1);
SELECT bloom_create(1000, -0.1);
SELECT bloom_create(1000, 1.5);
SELECT bloom_create(1000, 'NaN');
SELECT bloom_create(1000, 'Infinity');
SELECT bloom_create(1000, '-Infinity');
SELECT bloom_create(1000, '-0');

--
-- Too large: the hint gives the largest capacity at that rate (a filter has
-- at most 800,000,000 bytes of bits); one more than that is refused
--
SELECT bloom_create(641692453, 0.01);
SELECT bloom_create(77325284, 1e-9);
SELECT bloom_create(9223372036854775807, 0.5);

--
-- A very small rate is reachable with a small filter: one key in one
-- 512-bit block with k bits set is a false positive with probability of
-- about (k/512)^k, far below 1e-12.  Sizing must not refuse it as "too
-- large" (nor say that the capacity can be at most 0).
--
SELECT bloom_create(1, 1e-12) IS NOT NULL AS created;
SELECT bloom_create(1000, 1e-15) IS NOT NULL AS created;

-- the fewest blocks at small rates too: at 1e-9 the best k for 1000 keys
-- (21, in 162 blocks) lies well below the classic optimum ln 2 * bits per
-- key (30), and every k from 1 to 32 is a candidate
SELECT octet_length(f::bytea) AS payload_bytes, nblocks(f) AS nblocks,
       nhashes(f) AS k
FROM (SELECT bloom_create(1000, 1e-9) AS f) AS s;

--
-- STRICT: a NULL argument gives NULL
--
SELECT bloom_create(NULL) IS NULL AS null_capacity,
       bloom_create(NULL, 0.01) IS NULL AS null_capacity_with_rate,
       bloom_create(1000, NULL) IS NULL AS null_rate,
       bloom_create(NULL, NULL) IS NULL AS both_null;

--
-- The default rate is 0.01; arguments can be named; any integer type will do
--
SELECT pg_get_function_arguments('bloom_create'::regproc) AS arguments;
SELECT bloom_create(1000)::bytea = bloom_create(1000, 0.01)::bytea AS default_rate_is_0_01;
SELECT bloom_create(capacity => 1000, false_positive_rate => 0.001)::bytea =
       bloom_create(1000, 0.001)::bytea AS named_arguments;
SELECT bloom_create(1000::smallint)::bytea = bloom_create(1000::bigint)::bytea AS smallint_capacity;

-- the header records the capacity and rate asked for
SELECT encode(substring(bloom_create(1234, 0.0123)::bytea FROM 25 FOR 16), 'hex') AS capacity_and_rate,
       encode(substring(float8send(0.0123) FROM 1 FOR 8), 'hex') AS rate_big_endian;

-- an empty filter: no key family, no bits, contains nothing
SELECT substring(bloom_create(1000)::bytea FROM 45) = decode(repeat('00', 80 + 64 * 20), 'hex') AS all_zero_after_rate,
       bloom_contains(bloom_create(1000), 1) AS contains_1;

--
-- Sizes: deterministic, and they must stay so (a change of sizing changes
-- which filters can be combined).  Payload = 124-byte header + 64 bytes per
-- block.
--
CREATE TABLE sizes AS
SELECT n, p, bloom_create(n, p) AS f
FROM (VALUES (1::bigint, 0.01::float8), (10, 0.01), (100, 0.01), (1000, 0.01),
             (10000, 0.01), (100000, 0.01), (1000000, 0.01),
             (1000, 0.5), (1000, 0.1), (1000, 0.001), (1000, 0.0001),
             (1000, 1e-6)) AS v(n, p);
SELECT n, p, octet_length(f::bytea) AS payload_bytes, nblocks(f) AS nblocks,
       nhashes(f) AS k,
       octet_length(f::bytea) = 124 + 64 * nblocks(f) AS length_matches
FROM sizes ORDER BY p DESC, n;

-- sizes grow with the capacity ...
SELECT bool_and(prev IS NULL OR bytes >= prev) AS grows_with_capacity
FROM (SELECT octet_length(f::bytea) AS bytes,
             lag(octet_length(f::bytea)) OVER (ORDER BY n) AS prev
      FROM sizes WHERE p = 0.01) AS s;
-- ... and as the rate falls
SELECT bool_and(prev IS NULL OR bytes >= prev) AS grows_as_rate_falls
FROM (SELECT octet_length(f::bytea) AS bytes,
             lag(octet_length(f::bytea)) OVER (ORDER BY p DESC) AS prev
      FROM sizes WHERE n = 1000) AS s;
-- and a tenfold capacity needs about ten times the bits
SELECT round((SELECT nblocks(f) FROM sizes WHERE n = 1000000) /
             (SELECT nblocks(f) FROM sizes WHERE n = 100000), 1) AS ratio;
DROP TABLE sizes;

--
-- Labels of every function of the extension.  bloom_add is not STRICT (a
-- NULL key gives the filter back); bloom_contains is (NULL key, NULL
-- answer); the aggregate support functions are not, except serialize and
-- deserialize.  Everything is IMMUTABLE and PARALLEL SAFE.
--
SELECT p.oid::regprocedure AS function, p.prokind, p.provolatile,
       p.proisstrict, p.proparallel
FROM pg_proc AS p
JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
                   AND d.deptype = 'e'
JOIN pg_extension AS e ON e.oid = d.refobjid
WHERE e.extname = 'bloomfilter'
ORDER BY p.oid::regprocedure::text;

-- every aggregate has combine, serialize and deserialize functions (so it
-- can run in parallel) and an internal state
SELECT a.aggfnoid::regprocedure AS aggregate,
       a.aggtransfn::regprocedure, a.aggfinalfn::regprocedure,
       a.aggcombinefn, a.aggserialfn, a.aggdeserialfn, a.aggfinalextra,
       a.aggtranstype::regtype
FROM pg_aggregate AS a
JOIN pg_depend AS d ON d.classid = 'pg_proc'::regclass AND d.objid = a.aggfnoid
                   AND d.deptype = 'e'
JOIN pg_extension AS e ON e.oid = d.refobjid
WHERE e.extname = 'bloomfilter'
ORDER BY a.aggfnoid::regprocedure::text;

-- the type: variable length, int4-aligned, stored out of line uncompressed
SELECT typname, typlen, typalign, typstorage, typinput, typoutput,
       typreceive, typsend
FROM pg_type WHERE typname = 'bloom';

-- casts: bloom to bytea is binary coercible, bytea to bloom validates
SELECT castsource::regtype, casttarget::regtype, castfunc::regprocedure,
       castcontext, castmethod
FROM pg_cast
WHERE castsource = 'bloom'::regtype OR casttarget = 'bloom'::regtype
ORDER BY castsource::regtype::text;

DROP FUNCTION nhashes(bloom);
DROP FUNCTION nblocks(bloom);

-- the extension is trusted: a non-superuser with CREATE on a database can
-- install it
SELECT name, version, trusted, relocatable
FROM pg_available_extension_versions
WHERE name = 'bloomfilter' ORDER BY version;

-- and does (all undone by the ROLLBACK)
BEGIN;
SET LOCAL client_min_messages = warning;
DROP EXTENSION bloomfilter CASCADE;
RESET client_min_messages;
CREATE ROLE regress_bloom_trusted;
DO $$
BEGIN
  EXECUTE format('GRANT CREATE ON DATABASE %I TO regress_bloom_trusted',
                 current_database());
END
$$;
SET LOCAL ROLE regress_bloom_trusted;
CREATE EXTENSION bloomfilter;
SELECT extname, extowner::regrole FROM pg_extension WHERE extname = 'bloomfilter';
SELECT bloom_contains(bloom_add(bloom_create(10), 42), 42) AS works;
ROLLBACK;
