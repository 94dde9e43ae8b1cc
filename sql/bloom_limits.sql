--
-- bloom_limits: requests beyond the largest filter, sizes that would
-- overflow, a key of 100 MB, statements cancelled in the middle of a big
-- aggregate and of a run of big bloom_create calls, and aggregation with
-- work_mem at its minimum.  Each must end in a clear error or a correct
-- result, and the session must keep working afterwards.
--
-- The slow cases (100 million rows at the minimum work_mem, the largest
-- filter, how soon a cancel takes effect) are in test/limits.
--
\set VERBOSITY default
SET extra_float_digits = 0;

-- how much memory the session holds (all its memory contexts), in MB
CREATE FUNCTION pg_temp.session_mb() RETURNS numeric
LANGUAGE sql AS $$
    SELECT round(sum(total_bytes) / 1048576.0) FROM pg_backend_memory_contexts
$$;

-- does a line of the plan (EXPLAIN ANALYZE) of a query match a pattern?
CREATE FUNCTION pg_temp.plan_has(q text, pattern text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ pattern THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

--
-- 1. Beyond the largest filter (800,000,000 bytes of bits, so that the text
--    form fits in 1 GB): sizes that would overflow 64 bits or a varlena are
--    refused before anything is allocated, with the largest capacity at
--    that rate
--
SELECT bloom_create(4611686018427387904);            -- 2^62
SELECT bloom_create(9223372036854775807);            -- 2^63 - 1
SELECT bloom_create(9223372036854775807, 0.5);
SELECT bloom_size(4611686018427387904);
SELECT bloom_create('9223372036854775808');          -- not even a bigint

-- rates no filter reaches: a key sets at most 32 bits of one 512-bit block
SELECT bloom_create(1000, 1e-300);
SELECT bloom_create(1, 5e-324);                      -- the smallest double
SELECT bloom_create(1000000, 1e-100);

-- tiny rates that are reachable cost bits in proportion to 1 / rate once k
-- is at its cap of 32: 1000 keys at 1e-35 take half a gigabyte
SELECT r AS rate, nbytes, nhashes, expected_false_positive_rate <= r AS meets_rate
FROM unnest(ARRAY[1e-15, 1e-20, 1e-25, 1e-30, 1e-35]) AS r,
     LATERAL bloom_size(1000, r);
SELECT bloom_size(1000, 1e-36);

-- the sized aggregate refuses the same requests, at its first row, and over
-- no rows at all (where its final function sizes the empty filter)
SELECT bloom_agg(g, 9223372036854775807, 0.01) FROM generate_series(1, 3) g;
SELECT bloom_agg(g, 4611686018427387904, 0.01) FROM generate_series(1, 3) g;
SELECT bloom_agg(g, 1000, 1e-300) FROM generate_series(1, 3) g;
SELECT bloom_agg(g, 9223372036854775807, 0.01) FROM generate_series(1, 0) g;
SELECT g % 2 AS grp, bloom_agg(g, 9223372036854775807, 0.01)
FROM generate_series(1, 3) g GROUP BY 1;

--
-- 2. Untrusted bytes whose sizes would overflow: a header claiming 2^58
--    blocks (times 64 bytes is 2^64, which wraps to 0 and so would match a
--    header-only value) or 2^64 - 1 blocks is refused
--
SELECT overlay(substring(bloom_create(1)::bytea FROM 1 FOR 124)
               PLACING '\x0000000000000004'::bytea FROM 17 FOR 8)::bloom;
SELECT overlay(bloom_create(1)::bytea
               PLACING '\xffffffffffffffff'::bytea FROM 17 FOR 8)::bloom;
SELECT translate(encode(overlay(substring(bloom_create(1)::bytea FROM 1 FOR 124)
                                PLACING '\x0000000000000004'::bytea FROM 17 FOR 8),
                        'base64'), E'\n', '')::bloom;

--
-- 3. A key of 100 MB: added and found, as text and as bytea, in line and
--    stored (compressed and toasted) in a table, through bloom_add and
--    bloom_agg; a key that differs in its last byte is not found
--
SELECT bloom_contains(f, repeat('x', 100 * 1024 * 1024)) AS found,
       bloom_contains(f, repeat('x', 100 * 1024 * 1024 - 1) || 'y') AS other_found
FROM (SELECT bloom_add(bloom_create(10), repeat('x', 100 * 1024 * 1024)) AS f) s;

CREATE TEMP TABLE big_keys AS
SELECT repeat('x', 100 * 1024 * 1024) AS t,
       convert_to(repeat('y', 100 * 1024 * 1024), 'UTF8') AS b;
SELECT octet_length(t) AS text_bytes, octet_length(b) AS bytea_bytes,
       pg_column_size(t) < 10 * 1024 * 1024 AS t_compressed
FROM big_keys;

SELECT bloom_contains(bloom_add(bloom_create(10), t), repeat('x', 100 * 1024 * 1024)) AS text_found,
       bloom_contains(bloom_add(bloom_create(10), b), convert_to(repeat('y', 100 * 1024 * 1024), 'UTF8')) AS bytea_found,
       bloom_contains(bloom_add(bloom_create(10), b), '\x79'::bytea) AS short_bytea_found
FROM big_keys;
SELECT bloom_contains(f, t) AS agg_found, bloom_contains(f, 'x'::text) AS x_found
FROM (SELECT bloom_agg(t) AS f FROM big_keys) s, big_keys;
DROP TABLE big_keys;

--
-- 4. Cancelled by statement_timeout in the middle of a big aggregate (100
--    million rows of a cross join, so that the time goes into bloom_agg, not
--    into materializing the input) and of a run of big bloom_create calls
--    (120 MB each): the error, then the session works, and the memory of the
--    cancelled statement is gone
--
SELECT pg_temp.session_mb() < 50 AS small_before;

SET statement_timeout = '300ms';
SELECT bloom_agg(a * 10000 + b) FROM generate_series(1, 10000) a, generate_series(1, 10000) b;
SELECT bloom_agg(a * 10000 + b, 100000000, 0.01) FROM generate_series(1, 10000) a, generate_series(1, 10000) b;
SELECT count(bloom_create(100000000 + g % 2, 0.01)) FROM generate_series(1, 1000) g;
SELECT a % 100 AS grp, bloom_agg(b) FROM generate_series(1, 10000) a, generate_series(1, 10000) b GROUP BY 1;
RESET statement_timeout;

SELECT pg_temp.session_mb() < 50 AS small_after;
SELECT bloom_contains(bloom_agg(g), 5) AS works_after FROM generate_series(1, 10) g;

-- the same inside a transaction: the subtransaction is rolled back and the
-- transaction goes on
BEGIN;
SAVEPOINT before_big;
SET LOCAL statement_timeout = '300ms';
SELECT bloom_agg(a * 10000 + b) FROM generate_series(1, 10000) a, generate_series(1, 10000) b;
ROLLBACK TO SAVEPOINT before_big;
SELECT bloom_contains(bloom_agg(g, 100, 0.01), 5) AS works_in_transaction FROM generate_series(1, 10) g;
COMMIT;
SELECT pg_temp.session_mb() < 50 AS small_at_end;

--
-- 5. work_mem at its minimum: a hash aggregate whose groups do not fit
--    spills to disk and aggregates the spilled groups later; the filters
--    must be the same as those of a sorted aggregate with room to spare, and
--    hold every key of their group.  2000 groups of 100 keys: sized for
--    10000 keys (the states stay lists of hashes) and for 50 (they turn into
--    bits), and unsized
--
CREATE TEMP TABLE spill AS
SELECT i % 2000 AS grp, i AS k, md5(i::text) AS t
FROM generate_series(1, 200000) i;
ANALYZE spill;

\set q_groups 'SELECT grp, bloom_agg(k) AS unsized, bloom_agg(k, 10000, 0.01) AS sized, bloom_agg(k, 50, 0.01) AS sized_bits, bloom_agg(t) AS text_keys FROM spill GROUP BY grp'
SET work_mem = '64kB';
SET enable_sort = off;
SELECT pg_temp.plan_has(:'q_groups', 'HashAggregate') AS hashed,
       pg_temp.plan_has(:'q_groups', 'Batches: ([2-9]|\d\d+)') AS spilled;
CREATE TEMP TABLE hashed AS :q_groups;
CREATE TEMP TABLE hashed_union AS
SELECT grp % 20 AS grp20, bloom_union_agg(sized) AS u, bloom_intersect_agg(sized) AS i
FROM hashed GROUP BY 1;
RESET enable_sort;
RESET work_mem;

SET enable_hashagg = off;
SELECT pg_temp.plan_has(:'q_groups', 'GroupAggregate') AS sorted;
CREATE TEMP TABLE sorted AS :q_groups;
CREATE TEMP TABLE sorted_union AS
SELECT grp % 20 AS grp20, bloom_union_agg(sized) AS u, bloom_intersect_agg(sized) AS i
FROM sorted GROUP BY 1;
RESET enable_hashagg;

SELECT count(*) AS groups,
       count(*) FILTER (WHERE h.unsized = s.unsized) AS unsized_same,
       count(*) FILTER (WHERE h.sized = s.sized) AS sized_same,
       count(*) FILTER (WHERE h.sized_bits = s.sized_bits) AS sized_bits_same,
       count(*) FILTER (WHERE h.text_keys = s.text_keys) AS text_same
FROM hashed h JOIN sorted s USING (grp);
SELECT count(*) AS union_groups,
       count(*) FILTER (WHERE h.u = s.u AND h.i = s.i) AS union_same
FROM hashed_union h JOIN sorted_union s USING (grp20);
SELECT count(*) AS keys,
       count(*) FILTER (WHERE NOT bloom_contains(h.unsized, k)) AS unsized_missing,
       count(*) FILTER (WHERE NOT bloom_contains(h.sized, k)) AS sized_missing,
       count(*) FILTER (WHERE NOT bloom_contains(h.sized_bits, k)) AS sized_bits_missing,
       count(*) FILTER (WHERE NOT bloom_contains(h.text_keys, t)) AS text_missing
FROM spill JOIN hashed h USING (grp);

-- and without GROUP BY: one big state, whatever work_mem says
SET work_mem = '64kB';
WITH s AS (SELECT bloom_agg(k) AS f FROM spill)
SELECT (SELECT count(*) FROM spill WHERE NOT bloom_contains(s.f, k)) AS missing,
       round(bloom_cardinality(s.f) / 1000) AS thousands_of_keys
FROM s;
RESET work_mem;

DROP TABLE spill, hashed, sorted, hashed_union, sorted_union;
