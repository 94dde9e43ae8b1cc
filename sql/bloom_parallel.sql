--
-- bloom_parallel: a parallel aggregate (partial states built by workers,
-- serialized, deserialized and combined by the leader) gives exactly the
-- filter that the serial plan gives (DESIGN.md, "Aggregates mutate internal
-- state").  Filters are compared through the md5 of their bytes, kept in
-- psql variables, so that the output stays small.
--

-- does a line of the plan of a query match a pattern?  (a boolean, so
-- that the output does not depend on the rest of the plan)
CREATE FUNCTION pg_temp.plan_has(q text, pattern text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line ~ pattern THEN
            RETURN true;
        END IF;
    END LOOP;
    RETURN false;
END
$$;

-- does the plan aggregate in parallel: partial aggregates under a Gather?
CREATE FUNCTION pg_temp.partial_agg(q text) RETURNS boolean
LANGUAGE sql AS $$
    SELECT pg_temp.plan_has(q, 'Partial (Hash|Group)?Aggregate')
           AND pg_temp.plan_has(q, 'Gather')
$$;

-- how many parallel workers ran the query
CREATE FUNCTION pg_temp.workers_launched(q text) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    n int := 0;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF line ~ 'Workers Launched: ' THEN
            n := n + substring(line FROM 'Workers Launched: (\d+)')::int;
        END IF;
    END LOOP;
    RETURN n;
END
$$;

-- 1,000,000 rows; g = floor(log2(i)) makes groups of 1, 2, 4, ... 2^19
-- keys, so that some partial states are still lists of hashes and others
-- already bits when they are combined
CREATE TABLE par_big AS
SELECT i, md5(i::text) AS t,
       32 - position('1' IN i::bit(32)::text) AS g,
       i / 10 AS small_g
FROM generate_series(1, 1000000) i;
ANALYZE par_big;

-- the queries under test, each giving one md5
\set q_unsized 'SELECT md5(bloom_agg(i)::bytea) FROM par_big'
\set q_sized 'SELECT md5(bloom_agg(i, 1000000, 0.01)::bytea) FROM par_big'
\set q_text 'SELECT md5(bloom_agg(t)::bytea) FROM par_big'
\set q_dups 'SELECT md5(bloom_agg(i % 300000)::bytea) FROM par_big'
\set q_sized_text 'SELECT md5(bloom_agg(t, 1000000, 0.001)::bytea) FROM par_big'
\set q_sparse 'SELECT md5(bloom_agg(i, 1000, 0.01) FILTER (WHERE i % 1000 = 0)::bytea) FROM par_big'
\set q_grouped 'SELECT md5(string_agg(md5(u::bytea) || md5(s::bytea), '','' ORDER BY g)) FROM (SELECT g, bloom_agg(i) AS u, bloom_agg(i, 100000, 0.01) AS s FROM par_big GROUP BY g) x'
\set q_small_groups 'SELECT md5(string_agg(md5(u::bytea) || md5(s::bytea), '','' ORDER BY small_g)) FROM (SELECT small_g, bloom_agg(t) AS u, bloom_agg(i, 10, 0.01) AS s FROM par_big GROUP BY small_g) x'
-- no rows reach the aggregate
\set q_none_unsized 'SELECT md5(bloom_agg(t)::bytea) FROM par_big WHERE i < 0'
\set q_none_sized 'SELECT md5(bloom_agg(i, 1000, 0.01)::bytea) FROM par_big WHERE i < 0'
\set q_none_filter 'SELECT md5(bloom_agg(i, 1000, 0.01) FILTER (WHERE i < 0)::bytea) FROM par_big'

--
-- serial
--
SET max_parallel_workers_per_gather = 0;
SELECT pg_temp.partial_agg(:'q_unsized') AS unsized_parallel,
       pg_temp.partial_agg(:'q_grouped') AS grouped_parallel;
:q_unsized \gset serial_unsized_
:q_sized \gset serial_sized_
:q_text \gset serial_text_
:q_dups \gset serial_dups_
:q_sized_text \gset serial_sized_text_
:q_sparse \gset serial_sparse_
:q_grouped \gset serial_grouped_
:q_none_unsized \gset serial_none_unsized_
:q_none_sized \gset serial_none_sized_
:q_none_filter \gset serial_none_filter_
SET work_mem = '64MB';
:q_small_groups \gset serial_small_groups_
RESET work_mem;

--
-- parallel: two workers, the leader only combines
--
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT pg_temp.partial_agg(:'q_unsized') AS unsized,
       pg_temp.partial_agg(:'q_sized') AS sized,
       pg_temp.partial_agg(:'q_text') AS text,
       pg_temp.partial_agg(:'q_dups') AS dups,
       pg_temp.partial_agg(:'q_sized_text') AS sized_text,
       pg_temp.partial_agg(:'q_sparse') AS sparse,
       pg_temp.partial_agg(:'q_grouped') AS grouped,
       pg_temp.partial_agg(:'q_none_unsized') AS none_unsized,
       pg_temp.partial_agg(:'q_none_sized') AS none_sized,
       pg_temp.partial_agg(:'q_none_filter') AS none_filter;
SELECT pg_temp.workers_launched(:'q_unsized') > 0 AS workers_ran,
       pg_temp.workers_launched(:'q_grouped') > 0 AS grouped_workers_ran;
:q_unsized \gset parallel_unsized_
:q_sized \gset parallel_sized_
:q_text \gset parallel_text_
:q_dups \gset parallel_dups_
:q_sized_text \gset parallel_sized_text_
:q_sparse \gset parallel_sparse_
:q_grouped \gset parallel_grouped_
SELECT :'parallel_unsized_md5' = :'serial_unsized_md5' AS unsized,
       :'parallel_sized_md5' = :'serial_sized_md5' AS sized,
       :'parallel_text_md5' = :'serial_text_md5' AS text,
       :'parallel_dups_md5' = :'serial_dups_md5' AS dups,
       :'parallel_sized_text_md5' = :'serial_sized_text_md5' AS sized_text,
       :'parallel_sparse_md5' = :'serial_sparse_md5' AS sparse,
       :'parallel_grouped_md5' = :'serial_grouped_md5' AS grouped;
-- no rows: the same empty filter as the serial plan, never an error
SELECT md5(bloom_agg(t)::bytea) = :'serial_none_unsized_md5' AS none_unsized
FROM par_big WHERE i < 0;
SELECT md5(bloom_agg(i, 1000, 0.01)::bytea) = :'serial_none_sized_md5' AS none_sized
FROM par_big WHERE i < 0;
SELECT md5(bloom_agg(i, 1000, 0.01) FILTER (WHERE i < 0)::bytea) = :'serial_none_filter_md5' AS none_filter
FROM par_big;
-- 100,000 groups of 10 keys
SET work_mem = '64MB';
SELECT pg_temp.partial_agg(:'q_small_groups') AS small_groups;
:q_small_groups \gset parallel_small_groups_
SELECT :'parallel_small_groups_md5' = :'serial_small_groups_md5' AS small_groups;
RESET work_mem;
-- keys that both workers saw count once: the unsized filter is sized for
-- the 300,000 distinct keys, as in the serial plan
SELECT bloom_agg(i % 300000)::bytea = bloom_agg(i % 300000, 300000, 0.01)::bytea AS sized_for_distinct
FROM par_big;
-- and every key is found in the filters built in parallel
SELECT count(*) FILTER (WHERE bloom_contains(u, b.i)) AS unsized_found,
       count(*) FILTER (WHERE bloom_contains(s, b.i)) AS sized_found,
       count(*) FILTER (WHERE bloom_contains(ut, b.t)) AS text_found
FROM par_big b,
     (SELECT bloom_agg(i) AS u, bloom_agg(i, 1000000, 0.01) AS s, bloom_agg(t) AS ut FROM par_big) f;

--
-- spilling: beyond work_mem (and at least 1 MB) of hash lists, the unsized
-- state goes to temporary files.  Its filter is the same, byte for byte, as
-- the one built in memory, serial or parallel, and holds every key.
--
SET work_mem = '1GB';
SET max_parallel_workers_per_gather = 0;
SELECT md5(bloom_agg(t)::bytea) AS text_md5,
       md5(bloom_agg(i % 700000)::bytea) AS dups_md5,
       md5(bloom_agg(i % 100000)::bytea) AS small_md5
FROM par_big \gset mem_
SET work_mem = '64kB';
-- it does spill: a limit on temporary files stops it
CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;
SET temp_file_limit = '1kB';
SELECT pg_temp.sqlstate_of('SELECT bloom_agg(t) FROM par_big') AS over_temp_file_limit;
RESET temp_file_limit;
SELECT md5(bloom_agg(t)::bytea) = :'mem_text_md5' AS spilled_text_same,
       md5(bloom_agg(i % 700000)::bytea) = :'mem_dups_md5' AS spilled_dups_same
FROM par_big;
SET max_parallel_workers_per_gather = 2;
SELECT pg_temp.partial_agg('SELECT bloom_agg(t) FROM par_big') AS spilled_parallel;
SELECT md5(bloom_agg(t)::bytea) = :'mem_text_md5' AS spilled_parallel_text_same,
       md5(bloom_agg(i % 700000)::bytea) = :'mem_dups_md5' AS spilled_parallel_dups_same
FROM par_big;
-- each participant's state within the budget, together beyond it: the
-- leader moves them into its temporary files (the same keys in each)
SELECT md5(bloom_agg(i % 100000)::bytea) = :'mem_small_md5' AS spilled_parallel_small_same
FROM par_big;
SELECT count(*) FILTER (WHERE NOT bloom_contains(f, b.t)) AS spilled_false_negatives
FROM par_big b, (SELECT bloom_agg(t) AS f FROM par_big) x;
-- a window aggregate calls the final function again after more rows (its
-- state stays in memory): each peer group's filter is that of every row up
-- to it
SET max_parallel_workers_per_gather = 0;
SELECT md5(w::bytea) = :'mem_text_md5' AS spilled_window_same
FROM (SELECT i, bloom_agg(t) OVER (ORDER BY i / 300000) AS w FROM par_big) x
WHERE i = 1000000;
SELECT md5(bloom_agg(t)::bytea) AS first_md5 FROM par_big WHERE i < 300000 \gset
SELECT md5(w::bytea) = :'first_md5' AS spilled_window_first
FROM (SELECT i, bloom_agg(t) OVER (ORDER BY i / 300000) AS w FROM par_big) x
WHERE i = 1;
RESET work_mem;
SET max_parallel_workers_per_gather = 2;

--
-- partitionwise aggregation: partial states combined in one process,
-- without serialization, and then also in parallel
--
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE par_parts (p int, g int, i int, t text) PARTITION BY LIST (p);
CREATE TABLE par_parts_0 PARTITION OF par_parts FOR VALUES IN (0);
CREATE TABLE par_parts_1 PARTITION OF par_parts FOR VALUES IN (1);
CREATE TABLE par_parts_2 PARTITION OF par_parts FOR VALUES IN (2);
CREATE TABLE par_parts_3 PARTITION OF par_parts FOR VALUES IN (3);
INSERT INTO par_parts
SELECT i % 4, 32 - position('1' IN i::bit(32)::text), i, md5(i::text)
FROM generate_series(1, 300000) i;
-- one partition holds a single row: its partial states are small
DELETE FROM par_parts WHERE p = 3 AND i > 3;
ANALYZE par_parts;
\set q_parts 'SELECT md5(string_agg(md5(u::bytea) || md5(s::bytea) || md5(ut::bytea), '','' ORDER BY g)) FROM (SELECT g, bloom_agg(i) AS u, bloom_agg(i, 100000, 0.01) AS s, bloom_agg(t) AS ut FROM par_parts GROUP BY g) x'
SET enable_partitionwise_aggregate = off;
SELECT pg_temp.plan_has(:'q_parts', 'Partial') AS partial;
:q_parts \gset plain_
SET enable_partitionwise_aggregate = on;
SELECT pg_temp.plan_has(:'q_parts', 'Partial HashAggregate') AS partial_per_partition,
       pg_temp.plan_has(:'q_parts', 'Gather') AS gather;
:q_parts \gset partitionwise_
SELECT :'partitionwise_md5' = :'plain_md5' AS partitionwise_same;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT pg_temp.partial_agg(:'q_parts') AS parallel_partitionwise;
:q_parts \gset parallel_parts_
SELECT :'parallel_parts_md5' = :'plain_md5' AS parallel_partitionwise_same;

DROP TABLE par_big, par_parts;
