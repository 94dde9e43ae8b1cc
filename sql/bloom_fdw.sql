--
-- bloom_fdw: filters across postgres_fdw, through a loopback server (one
-- on the same cluster, as postgres_fdw's own tests do; test/t/020_fdw_shards.pl
-- does the same across real clusters).  With bloomfilter in the server's
-- extensions option, bloom_agg over a foreign table and bloom_contains(filter,
-- column) in its WHERE clause run on the remote side; the filters travel as
-- text literals, which bloom's input reads back bit for bit; and filters
-- built on each shard combine on the coordinator into the filter of the
-- whole table.
--
CREATE EXTENSION postgres_fdw;

-- the loopback servers: one that may ship bloomfilter's functions, one that
-- may not
DO $d$
BEGIN
    EXECUTE format('CREATE SERVER loopback FOREIGN DATA WRAPPER postgres_fdw
                    OPTIONS (dbname %L, port %L, extensions %L)',
                   current_database(), current_setting('port'), 'bloomfilter');
    EXECUTE format('CREATE SERVER loopback_plain FOREIGN DATA WRAPPER postgres_fdw
                    OPTIONS (dbname %L, port %L)',
                   current_database(), current_setting('port'));
END
$d$;
CREATE USER MAPPING FOR CURRENT_USER SERVER loopback;
CREATE USER MAPPING FOR CURRENT_USER SERVER loopback_plain;

-- EXPLAIN (VERBOSE, COSTS OFF), with filter literals (base64) shortened and
-- an InitPlan's heading as PostgreSQL 17 and 18 print it: 15 and 16 add
-- the parameters it sets, "InitPlan 1 (returns $0)", which nothing here shows
-- (the Remote SQL names the parameter it sends, $1, on every version), and
-- 19 names it for its kind, "InitPlan expr_1"
CREATE FUNCTION pg_temp.explain(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
        line := regexp_replace(line, '^( *InitPlan [0-9]+) \(returns [$0-9, ]+\)$', '\1');
        line := regexp_replace(line, '^( *InitPlan) [a-z]+_([0-9]+)$', '\1 \2');
        RETURN NEXT regexp_replace(line, '''[A-Za-z0-9+/]{40,}=*''', '''<filter>''', 'g');
    END LOOP;
END
$$;

--
-- Filters travel as text literals: text output read back by text input is
-- the same value, bit for bit, for every kind of filter
--
SELECT name,
       f::text::bloom = f AS same_value,
       f::text::bloom::bytea = f::bytea AS same_bytes
FROM (VALUES ('never added to', bloom_create(1000)),
             ('integer keys', (SELECT bloom_agg(i) FROM generate_series(1, 5000) i)),
             ('text keys', (SELECT bloom_agg(md5(i::text), 5000, 0.001) FROM generate_series(1, 5000) i)),
             ('uuid keys', (SELECT bloom_agg(md5(i::text)::uuid) FROM generate_series(1, 100) i)),
             ('a large filter', (SELECT bloom_agg(i, 1000000, 0.01) FROM generate_series(1, 1000) i)))
     AS v(name, f);

--
-- Three shards, each a table "on the remote side", reached through a
-- foreign table; and the same three as the foreign partitions of one table
--
CREATE TABLE fdw_shard_1 (shard int, k int, t text);
CREATE TABLE fdw_shard_2 (shard int, k int, t text);
CREATE TABLE fdw_shard_3 (shard int, k int, t text);
INSERT INTO fdw_shard_1 SELECT 1, i, md5(i::text) FROM generate_series(1, 30000) i WHERE i % 3 = 0;
INSERT INTO fdw_shard_2 SELECT 2, i, md5(i::text) FROM generate_series(1, 30000) i WHERE i % 3 = 1;
INSERT INTO fdw_shard_3 SELECT 3, i, md5(i::text) FROM generate_series(1, 30000) i WHERE i % 3 = 2;
-- some NULL keys, which every filter skips
INSERT INTO fdw_shard_2 VALUES (2, NULL, NULL);
ANALYZE fdw_shard_1, fdw_shard_2, fdw_shard_3;
CREATE FOREIGN TABLE fdw_remote_1 (shard int, k int, t text)
    SERVER loopback OPTIONS (table_name 'fdw_shard_1');
CREATE FOREIGN TABLE fdw_remote_2 (shard int, k int, t text)
    SERVER loopback OPTIONS (table_name 'fdw_shard_2');
CREATE FOREIGN TABLE fdw_remote_3 (shard int, k int, t text)
    SERVER loopback OPTIONS (table_name 'fdw_shard_3');
CREATE FOREIGN TABLE fdw_plain_1 (shard int, k int, t text)
    SERVER loopback_plain OPTIONS (table_name 'fdw_shard_1');
CREATE TABLE fdw_sharded (shard int, k int, t text) PARTITION BY LIST (shard);
CREATE FOREIGN TABLE fdw_sharded_1 PARTITION OF fdw_sharded FOR VALUES IN (1)
    SERVER loopback OPTIONS (table_name 'fdw_shard_1');
CREATE FOREIGN TABLE fdw_sharded_2 PARTITION OF fdw_sharded FOR VALUES IN (2)
    SERVER loopback OPTIONS (table_name 'fdw_shard_2');
CREATE FOREIGN TABLE fdw_sharded_3 PARTITION OF fdw_sharded FOR VALUES IN (3)
    SERVER loopback OPTIONS (table_name 'fdw_shard_3');
-- all the rows, locally
CREATE VIEW fdw_all AS
SELECT * FROM fdw_shard_1 UNION ALL SELECT * FROM fdw_shard_2
UNION ALL SELECT * FROM fdw_shard_3;

--
-- bloom_agg over a foreign table runs on the remote side: the whole
-- aggregate is in the Remote SQL, and one filter comes back
--
SELECT * FROM pg_temp.explain('SELECT bloom_agg(k, 30000, 0.01) FROM fdw_remote_1');
SELECT * FROM pg_temp.explain('SELECT bloom_agg(t) FROM fdw_remote_2');
SELECT * FROM pg_temp.explain('SELECT shard, bloom_agg(k) FROM fdw_remote_3 GROUP BY shard');
-- not without bloomfilter in the extensions option: every row comes over
SELECT * FROM pg_temp.explain('SELECT bloom_agg(k, 30000, 0.01) FROM fdw_plain_1');
-- the same filters as built locally, bit for bit
SELECT (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_remote_1) =
       (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_shard_1) AS sized,
       (SELECT bloom_agg(t) FROM fdw_remote_2) =
       (SELECT bloom_agg(t) FROM fdw_shard_2) AS unsized_text,
       (SELECT bloom_agg(k) FROM fdw_remote_3) =
       (SELECT bloom_agg(k) FROM fdw_shard_3) AS unsized,
       (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_plain_1) =
       (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_shard_1) AS not_shipped,
       (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_remote_1 WHERE k < 0) =
       (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_shard_1 WHERE k < 0) AS no_rows;

--
-- bloom_contains(filter, column) in the WHERE clause runs on the remote
-- side, with the filter sent along: as a literal when it is a constant, as
-- a parameter when it comes from a local table (a scalar subquery)
--
CREATE TABLE fdw_filters (name text PRIMARY KEY, f bloom);
INSERT INTO fdw_filters
SELECT 'every 7th key', bloom_agg(i, 5000, 0.01) FROM generate_series(7, 30000, 7) i
UNION ALL
SELECT 'md5 of every 7th key', bloom_agg(md5(i::text), 5000, 0.01) FROM generate_series(7, 30000, 7) i;
SELECT f AS every_7th FROM fdw_filters WHERE name = 'every 7th key' \gset
SELECT * FROM pg_temp.explain(format(
    'SELECT k FROM fdw_remote_1 WHERE bloom_contains(%L::bloom, k)', :'every_7th'));
SELECT * FROM pg_temp.explain(format(
    'SELECT count(*) FROM fdw_remote_1 WHERE NOT bloom_contains(%L::bloom, k)', :'every_7th'));
SELECT * FROM pg_temp.explain(
    'SELECT count(*) FROM fdw_remote_2 WHERE bloom_contains((SELECT f FROM fdw_filters WHERE name = ''md5 of every 7th key''), t)');
-- not without bloomfilter in the extensions option: filtered locally
SELECT * FROM pg_temp.explain(format(
    'SELECT k FROM fdw_plain_1 WHERE bloom_contains(%L::bloom, k)', :'every_7th'));
-- the same rows as locally: every 7th key, plus the false positives
SELECT (SELECT array_agg(k ORDER BY k) FROM fdw_remote_1 WHERE bloom_contains(:'every_7th'::bloom, k)) =
       (SELECT array_agg(k ORDER BY k) FROM fdw_shard_1 WHERE bloom_contains(:'every_7th'::bloom, k)) AS same_rows,
       (SELECT count(*) FROM fdw_remote_1 WHERE bloom_contains(:'every_7th'::bloom, k) AND k % 7 = 0) =
       (SELECT count(*) FROM fdw_shard_1 WHERE k % 7 = 0) AS no_false_negatives,
       (SELECT count(*) FROM fdw_remote_2
        WHERE bloom_contains((SELECT f FROM fdw_filters WHERE name = 'md5 of every 7th key'), t)) =
       (SELECT count(*) FROM fdw_shard_2
        WHERE bloom_contains((SELECT f FROM fdw_filters WHERE name = 'md5 of every 7th key'), t)) AS same_count_text;
-- a prepared statement's parameter is sent along as well
PREPARE fdw_probe(bloom) AS SELECT count(*) FROM fdw_remote_3 WHERE bloom_contains($1, k);
SET plan_cache_mode = force_generic_plan;
SELECT * FROM pg_temp.explain(format('EXECUTE fdw_probe(%L)', :'every_7th'));
EXECUTE fdw_probe(:'every_7th');
SELECT count(*) FROM fdw_shard_3 WHERE bloom_contains(:'every_7th'::bloom, k);
RESET plan_cache_mode;
DEALLOCATE fdw_probe;

--
-- Shards: each builds its filter, with one capacity and rate for all of
-- them, and the coordinator ORs them together with bloom_union_agg.  The
-- result is bit for bit the filter of the whole table.
--
SELECT * FROM pg_temp.explain($$
SELECT bloom_union_agg(f) FROM (
    SELECT bloom_agg(k, 30000, 0.01) AS f FROM fdw_remote_1
    UNION ALL SELECT bloom_agg(k, 30000, 0.01) FROM fdw_remote_2
    UNION ALL SELECT bloom_agg(k, 30000, 0.01) FROM fdw_remote_3) s
$$);
SELECT (SELECT bloom_union_agg(f) FROM (
            SELECT bloom_agg(k, 30000, 0.01) AS f FROM fdw_remote_1
            UNION ALL SELECT bloom_agg(k, 30000, 0.01) FROM fdw_remote_2
            UNION ALL SELECT bloom_agg(k, 30000, 0.01) FROM fdw_remote_3) s)::bytea =
       (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_all)::bytea AS union_is_whole,
       (SELECT bloom_union_agg(f) FROM (
            SELECT bloom_agg(t, 30000, 0.001) AS f FROM fdw_remote_1
            UNION ALL SELECT bloom_agg(t, 30000, 0.001) FROM fdw_remote_2
            UNION ALL SELECT bloom_agg(t, 30000, 0.001) FROM fdw_remote_3) s)::bytea =
       (SELECT bloom_agg(t, 30000, 0.001) FROM fdw_all)::bytea AS union_is_whole_text;

-- The same over the partitioned table of foreign partitions: grouped by the
-- partition key, partitionwise aggregation sends each partition's
-- aggregate to its server
SET enable_partitionwise_aggregate = on;
SELECT * FROM pg_temp.explain(
    'SELECT shard, bloom_agg(k, 30000, 0.01) FROM fdw_sharded GROUP BY shard');
SELECT (SELECT bloom_union_agg(f) FROM (
            SELECT shard, bloom_agg(k, 30000, 0.01) AS f FROM fdw_sharded GROUP BY shard) s) =
       (SELECT bloom_agg(k, 30000, 0.01) FROM fdw_all) AS union_is_whole;
-- and a probe of the whole table is sent to every shard
SELECT * FROM pg_temp.explain(format(
    'SELECT count(*) FROM fdw_sharded WHERE bloom_contains(%L::bloom, k)', :'every_7th'));
SELECT (SELECT count(*) FROM fdw_sharded WHERE bloom_contains(:'every_7th'::bloom, k)) =
       (SELECT count(*) FROM fdw_all WHERE bloom_contains(:'every_7th'::bloom, k)) AS same_count;
RESET enable_partitionwise_aggregate;

-- filters of different shapes refuse to combine, on the coordinator as
-- anywhere else
SELECT bloom_union_agg(f) FROM (
    SELECT bloom_agg(k, 30000, 0.01) AS f FROM fdw_remote_1
    UNION ALL SELECT bloom_agg(k, 20000, 0.01) FROM fdw_remote_2) s;

DROP VIEW fdw_all;
DROP TABLE fdw_sharded, fdw_filters, fdw_shard_1, fdw_shard_2, fdw_shard_3;
DROP FOREIGN TABLE fdw_remote_1, fdw_remote_2, fdw_remote_3, fdw_plain_1;
DROP USER MAPPING FOR CURRENT_USER SERVER loopback;
DROP USER MAPPING FOR CURRENT_USER SERVER loopback_plain;
DROP SERVER loopback, loopback_plain;
DROP EXTENSION postgres_fdw;
