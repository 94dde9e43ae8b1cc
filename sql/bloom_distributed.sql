--
-- bloom_distributed: the partial-aggregation path that distributed engines
-- build on.  Each "node" (here a parallel worker, over the partitions of a
-- table) runs the transition function over its rows, serializes its partial
-- state to bytes, and the coordinator (the leader) deserializes the states
-- and combines them with the combine function before the final function
-- runs.  The filters that come out must be bit for bit those of a plain
-- serial aggregate.  Then the recipe for engines that cannot combine an
-- internal state (Citus): one filter per shard, sent as text, ORed together
-- by bloom_union_agg.
--

-- the plan of a query, without the worker counts (which depend on the
-- machine)
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line !~ 'Workers Planned' THEN
            RETURN NEXT line;
        END IF;
    END LOOP;
END
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

-- four "shards" of 40,000 rows; g cuts across them, so that every group
-- gets partial states from several shards and workers
CREATE TABLE dist_events (shard int, g int, k int, t text) PARTITION BY LIST (shard);
CREATE TABLE dist_events_0 PARTITION OF dist_events FOR VALUES IN (0);
CREATE TABLE dist_events_1 PARTITION OF dist_events FOR VALUES IN (1);
CREATE TABLE dist_events_2 PARTITION OF dist_events FOR VALUES IN (2);
CREATE TABLE dist_events_3 PARTITION OF dist_events FOR VALUES IN (3);
INSERT INTO dist_events
SELECT i % 4, i % 5, i, md5(i::text) FROM generate_series(1, 40000) i;
-- duplicate keys on every shard: the unsized filter counts them once
INSERT INTO dist_events
SELECT (i + 1) % 4, i % 5, i, md5(i::text) FROM generate_series(1, 40000, 3) i;
ANALYZE dist_events;

-- filters built per shard and day, for the set aggregates
CREATE TABLE dist_filters (shard int, day int, f bloom) PARTITION BY LIST (shard);
CREATE TABLE dist_filters_0 PARTITION OF dist_filters FOR VALUES IN (0);
CREATE TABLE dist_filters_1 PARTITION OF dist_filters FOR VALUES IN (1);
CREATE TABLE dist_filters_2 PARTITION OF dist_filters FOR VALUES IN (2);
CREATE TABLE dist_filters_3 PARTITION OF dist_filters FOR VALUES IN (3);
INSERT INTO dist_filters
SELECT s, d, (SELECT bloom_agg(i, 5000, 0.01) FROM generate_series(1, 3000) i
              WHERE i % (s + 2) = 0 OR i % (d + 3) = 0)
FROM generate_series(0, 3) s, generate_series(0, 49) d;
ANALYZE dist_filters;

-- the queries under test, each giving one md5 of all the filters it makes
\set q_sized 'SELECT md5(bloom_agg(k, 40000, 0.01)::bytea) FROM dist_events'
\set q_unsized 'SELECT md5(bloom_agg(k)::bytea) FROM dist_events'
\set q_text 'SELECT md5(bloom_agg(t)::bytea || bloom_agg(t, 40000, 0.001)::bytea) FROM dist_events'
\set q_grouped 'SELECT md5(string_agg(md5(s::bytea) || md5(u::bytea), '','' ORDER BY g)) FROM (SELECT g, bloom_agg(k, 10000, 0.01) AS s, bloom_agg(t) AS u FROM dist_events GROUP BY g) x'
\set q_union 'SELECT md5(bloom_union_agg(f)::bytea || bloom_intersect_agg(f)::bytea) FROM dist_filters'
\set q_union_grouped 'SELECT md5(string_agg(md5(u::bytea) || md5(i::bytea), '','' ORDER BY day)) FROM (SELECT day, bloom_union_agg(f) AS u, bloom_intersect_agg(f) AS i FROM dist_filters GROUP BY day) x'

--
-- serial, one process, no partial states
--
SET max_parallel_workers_per_gather = 0;
SET enable_partitionwise_aggregate = off;
SELECT * FROM pg_temp.plan(:'q_sized');
:q_sized \gset serial_sized_
:q_unsized \gset serial_unsized_
:q_text \gset serial_text_
:q_grouped \gset serial_grouped_
:q_union \gset serial_union_
:q_union_grouped \gset serial_union_grouped_

--
-- distributed: a partial aggregate per shard, run by two workers (the
-- leader only combines), each partial state serialized by a worker and
-- deserialized and combined by the leader
--
SET enable_partitionwise_aggregate = on;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT * FROM pg_temp.plan(:'q_sized');
SELECT * FROM pg_temp.plan(:'q_grouped');
SELECT * FROM pg_temp.plan(:'q_union');
SELECT pg_temp.workers_launched(:'q_sized') > 0 AS workers_ran,
       pg_temp.workers_launched(:'q_union_grouped') > 0 AS union_workers_ran;
:q_sized \gset dist_sized_
:q_unsized \gset dist_unsized_
:q_text \gset dist_text_
:q_grouped \gset dist_grouped_
:q_union \gset dist_union_
:q_union_grouped \gset dist_union_grouped_
SELECT :'dist_sized_md5' = :'serial_sized_md5' AS sized,
       :'dist_unsized_md5' = :'serial_unsized_md5' AS unsized,
       :'dist_text_md5' = :'serial_text_md5' AS text,
       :'dist_grouped_md5' = :'serial_grouped_md5' AS grouped,
       :'dist_union_md5' = :'serial_union_md5' AS union_intersect,
       :'dist_union_grouped_md5' = :'serial_union_grouped_md5' AS union_intersect_grouped;

-- and with many workers' states per group: parallel scans of every shard
-- (no partitionwise split), the leader combining whatever each worker saw
SET enable_partitionwise_aggregate = off;
SELECT * FROM pg_temp.plan(:'q_grouped');
:q_grouped \gset mixed_grouped_
:q_unsized \gset mixed_unsized_
SELECT :'mixed_grouped_md5' = :'serial_grouped_md5' AS grouped,
       :'mixed_unsized_md5' = :'serial_unsized_md5' AS unsized;
RESET enable_partitionwise_aggregate;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;

--
-- What a distributed engine needs of the aggregates (doc-scaling.md): a
-- combine function, serialize and deserialize functions for the internal
-- state, PARALLEL SAFE, and immutable support functions; and
-- bloom_contains immutable, so that it runs on the shards
--
SELECT a.aggfnoid::regprocedure AS aggregate,
       a.aggcombinefn <> 0 AS combine,
       a.aggserialfn <> 0 AS serialize,
       a.aggdeserialfn <> 0 AS deserialize,
       a.aggtranstype::regtype AS state,
       p.proparallel AS parallel,
       (SELECT bool_and(f.provolatile = 'i')
        FROM pg_proc f
        WHERE f.oid IN (a.aggtransfn, a.aggfinalfn, a.aggcombinefn,
                        a.aggserialfn, a.aggdeserialfn)) AS immutable_support
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE p.proname IN ('bloom_agg', 'bloom_union_agg', 'bloom_intersect_agg')
ORDER BY a.aggfnoid::regprocedure::text;
SELECT oid::regprocedure, provolatile, proparallel
FROM pg_proc WHERE proname IN ('bloom_contains', 'bloom_in', 'bloom_out')
ORDER BY oid::regprocedure::text;

--
-- The recipe for engines that do not combine an internal state (Citus
-- gathers the rows of such an aggregate to the coordinator): each shard
-- builds its filter whole, with one capacity and rate, and sends it as text
-- (what run_command_on_shards returns); the coordinator reads the texts back
-- and ORs them together.  Bit for bit the filter of the whole table.
--
CREATE FUNCTION pg_temp.shard_filters() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    s regclass;
    result text;
BEGIN
    FOR s IN SELECT relid FROM pg_partition_tree('dist_events') WHERE isleaf LOOP
        EXECUTE format('SELECT bloom_agg(k, 40000, 0.01)::text FROM %s', s) INTO result;
        RETURN NEXT result;
    END LOOP;
END
$$;
SELECT count(*) AS shards,
       bloom_union_agg(r::bloom) = (SELECT bloom_agg(k, 40000, 0.01) FROM dist_events) AS union_is_whole
FROM pg_temp.shard_filters() r;

DROP TABLE dist_events, dist_filters;
