--
-- bloom_join_parts: the join pre-check over partitioned inner tables.  The
-- planner's hook locks and opens only the partitions the plan scans (the
-- others pruned), and a join into a range, list or hash partitioned table
-- gives the rows of the plain plan.
--
SET max_parallel_workers_per_gather = 0;

\i sql/include/join_check.sql

-- The locks this transaction holds after planning the query (EXPLAIN)
-- with the setting given: planning locks what it opens until the end of
-- the transaction, so each call is its own statement.
CREATE FUNCTION jp_locks(q text, setting text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    PERFORM set_config('bloomfilter.join_filter', setting, true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    END LOOP;
    RETURN (SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid());
END
$$;

-- The Bloom Filter line of the plan: the index, and the leaves it probes.
CREATE FUNCTION jp_filter(q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line ~ 'Bloom' THEN
            RETURN NEXT trim(line);
        END IF;
    END LOOP;
END
$$;

--
-- 300 range partitions, the inner side pruned to one: the hook locks no
-- more than the plain plan does (before, every partition and its index:
-- about 600 locks more)
--
CREATE TABLE jp_out (k bigint);
INSERT INTO jp_out SELECT g FROM generate_series(1, 3000) g;
ANALYZE jp_out;
CREATE TABLE jp_many (k bigint) PARTITION BY RANGE (k);
DO $$
BEGIN
    FOR i IN 0 .. 299 LOOP
        EXECUTE format('CREATE TABLE jp_many_%s PARTITION OF jp_many FOR VALUES FROM (%s) TO (%s)',
                       i, i * 100, (i + 1) * 100);
    END LOOP;
END
$$;
INSERT INTO jp_many SELECT g * 2 FROM generate_series(0, 14999) g;
CREATE INDEX ON jp_many (k);
CREATE INDEX jp_many_bf ON jp_many USING bloomfilter (k) WITH (capacity = 1000);
ANALYZE jp_many;
\set q 'SELECT * FROM jp_out o WHERE NOT EXISTS (SELECT 1 FROM jp_many p WHERE p.k = o.k AND p.k >= 1000 AND p.k < 1100)'
SELECT jp_locks(:'q', 'off') AS off_locks \gset
SELECT jp_locks(:'q', 'on') - :off_locks <= 2 AS few_more_locks;
SELECT * FROM join_check(:'q');
-- the path is offered, and its filter probes the one partition's index
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT * FROM jp_filter(:'q');
SELECT * FROM join_check(:'q');
-- pruned to nothing: no path, nothing opened
\set q 'SELECT * FROM jp_out o WHERE NOT EXISTS (SELECT 1 FROM jp_many p WHERE p.k = o.k AND p.k < 0)'
SELECT jp_locks(:'q', 'on') - jp_locks(:'q', 'off') <= 0 AS no_more_locks;
SELECT * FROM join_check(:'q');
-- two partitions of 300, as an EXISTS
\set q 'SELECT * FROM jp_out o WHERE EXISTS (SELECT 1 FROM jp_many p WHERE p.k = o.k AND p.k >= 2050 AND p.k < 2250)'
SELECT jp_locks(:'q', 'off') AS off_locks \gset
SELECT jp_locks(:'q', 'on') - :off_locks <= 2 AS few_more_locks;
SELECT * FROM join_check(:'q');
RESET enable_hashjoin;
RESET enable_mergejoin;
-- a one-row outer side gets no path: nothing to gain, the plan is PostgreSQL's
\set q 'SELECT * FROM jp_out o WHERE o.k = 7 AND NOT EXISTS (SELECT 1 FROM jp_many p WHERE p.k = o.k)'
SELECT * FROM join_check(:'q');
DROP TABLE jp_many;

--
-- Range, list and hash partitioned inner tables (sub-partitioned too):
-- the rows of the plain plan, the filter probing the leaves the plan scans
--
CREATE TABLE jp_in (k int);
INSERT INTO jp_in SELECT g * 7 FROM generate_series(1, 2000) g;
INSERT INTO jp_in VALUES (NULL);
ANALYZE jp_in;
CREATE TABLE jp_range (k int) PARTITION BY RANGE (k);
CREATE TABLE jp_range_1 PARTITION OF jp_range FOR VALUES FROM (MINVALUE) TO (5000);
CREATE TABLE jp_range_2 PARTITION OF jp_range FOR VALUES FROM (5000) TO (MAXVALUE)
    PARTITION BY HASH (k);
CREATE TABLE jp_range_2a PARTITION OF jp_range_2 FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE jp_range_2b PARTITION OF jp_range_2 FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE jp_list (k int) PARTITION BY LIST (k);
CREATE TABLE jp_hash (k int) PARTITION BY HASH (k);
CREATE TABLE jp_list_a PARTITION OF jp_list FOR VALUES IN (3, 6, 9, 21, 42, 63, 84);
CREATE TABLE jp_list_b PARTITION OF jp_list FOR VALUES IN (12, 15, 105, 7000);
CREATE TABLE jp_list_other PARTITION OF jp_list DEFAULT;
DO $$
BEGIN
    FOR i IN 0 .. 7 LOOP
        EXECUTE format('CREATE TABLE jp_hash_%s PARTITION OF jp_hash FOR VALUES WITH (MODULUS 8, REMAINDER %s)', i, i);
    END LOOP;
END
$$;
INSERT INTO jp_range SELECT g * 3 FROM generate_series(1, 5000) g;
INSERT INTO jp_list SELECT g * 3 FROM generate_series(1, 5000) g;
INSERT INTO jp_hash SELECT g * 3 FROM generate_series(1, 5000) g;
CREATE INDEX ON jp_range (k);
CREATE INDEX ON jp_list (k);
CREATE INDEX ON jp_hash (k);
CREATE INDEX jp_range_bf ON jp_range USING bloomfilter (k);
CREATE INDEX jp_list_bf ON jp_list USING bloomfilter (k);
CREATE INDEX jp_hash_bf ON jp_hash USING bloomfilter (k);
ANALYZE jp_range, jp_list, jp_hash;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE NOT EXISTS (SELECT 1 FROM jp_range p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE EXISTS (SELECT 1 FROM jp_range p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE NOT EXISTS (SELECT 1 FROM jp_range p WHERE p.k = i.k AND p.k > 6000)');
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE NOT EXISTS (SELECT 1 FROM jp_list p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE EXISTS (SELECT 1 FROM jp_list p WHERE p.k = i.k AND p.k IN (3, 6, 9, 21, 42, 63, 84, 105))');
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE NOT EXISTS (SELECT 1 FROM jp_list p WHERE p.k = i.k AND p.k IN (21, 42, 63, 84))');
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE NOT EXISTS (SELECT 1 FROM jp_hash p WHERE p.k = i.k)');
SELECT * FROM join_check('SELECT * FROM jp_in i WHERE EXISTS (SELECT 1 FROM jp_hash p WHERE p.k = i.k)');
RESET enable_hashjoin;
RESET enable_mergejoin;

-- A generic plan whose parameter on the partition key leaves one partition
-- (or a few) to the exact checks at the executor's startup: the node opens,
-- locks and probes only the leaves of the partitions they scan, and gives
-- the rows of the setting off (an error if not).  The leaf indexes locked
-- after each EXECUTE are counted: all 200 before the fix.  No autovacuum:
-- its VACUUM or ANALYZE of a partition invalidates the generic plan, and
-- the replanning of the next EXECUTE locks every partition's indexes.
CREATE TABLE jg_in (k int) WITH (autovacuum_enabled = off);
INSERT INTO jg_in SELECT g * 2 FROM generate_series(1, 4000) g;
CREATE TABLE jg (k int, j int) PARTITION BY RANGE (k);
DO $$
BEGIN
    FOR i IN 0 .. 199 LOOP
        EXECUTE format('CREATE TABLE jg_%s PARTITION OF jg FOR VALUES FROM (%s) TO (%s)'
                       ' WITH (autovacuum_enabled = off)', i, i * 100, i * 100 + 100);
    END LOOP;
END
$$;
-- j lies in several partitions: k, and each key 3,000 apart
INSERT INTO jg SELECT g, g % 3000 FROM generate_series(0, 19999) g;
CREATE INDEX ON jg (j);
CREATE INDEX jg_bf ON jg USING bloomfilter (j);
ANALYZE jg_in, jg;
CREATE FUNCTION jg_leaf_locks() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
    JOIN pg_am a ON a.oid = c.relam
    WHERE l.pid = pg_backend_pid() AND a.amname = 'bloomfilter' AND c.relkind = 'i'
$$;
CREATE TEMP TABLE jg_rows (q text, setting text, n bigint, s bigint, locks bigint);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SET plan_cache_mode = force_generic_plan;
PREPARE jg_anti(int) AS SELECT count(*), sum(k) FROM jg_in i WHERE NOT EXISTS
    (SELECT 1 FROM jg WHERE jg.j = i.k AND jg.k >= $1);
PREPARE jg_semi(int) AS SELECT count(*), sum(k) FROM jg_in i WHERE EXISTS
    (SELECT 1 FROM jg WHERE jg.j = i.k AND jg.k >= $1);
-- the generic plans use the filter, their exact checks pruned at startup
DO $$
DECLARE
    line text;
    plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) EXECUTE jg_anti(19900)' LOOP
        plan := plan || line || E'\n';
    END LOOP;
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) EXECUTE jg_semi(19900)' LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RAISE NOTICE 'filter: %, semi: %, pruned at startup: %',
        plan ~ 'BloomAntiJoin', plan ~ 'BloomSemiJoin', plan ~ 'Subplans Removed: 199';
END
$$;
CREATE FUNCTION jg_run(q text, setting text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
    s bigint;
BEGIN
    PERFORM set_config('bloomfilter.join_filter', setting, true);
    EXECUTE q INTO n, s;
    INSERT INTO jg_rows VALUES (q, setting, n, s, jg_leaf_locks());
    PERFORM set_config('bloomfilter.join_filter', 'on', true);
END
$$;
-- each in its own transaction: the locks are those of one EXECUTE.  One
-- partition left (its keys, 1,900 .. 1,999, lie in pruned ones too)
SELECT jg_run('EXECUTE jg_anti(19900)', 'on');
SELECT jg_run('EXECUTE jg_anti(19900)', 'off');
SELECT jg_run('EXECUTE jg_semi(19900)', 'on');
SELECT jg_run('EXECUTE jg_semi(19900)', 'off');
-- several partitions left (21 and 80 of them), each key in several
SELECT jg_run('EXECUTE jg_anti(17900)', 'on');
SELECT jg_run('EXECUTE jg_anti(17900)', 'off');
SELECT jg_run('EXECUTE jg_semi(17900)', 'on');
SELECT jg_run('EXECUTE jg_semi(17900)', 'off');
SELECT jg_run('EXECUTE jg_anti(12000)', 'on');
SELECT jg_run('EXECUTE jg_anti(12000)', 'off');
SELECT jg_run('EXECUTE jg_semi(12000)', 'on');
SELECT jg_run('EXECUTE jg_semi(12000)', 'off');
-- rows equal on and off; the leaves locked with the filter on: those of
-- the partitions scanned (1, 21, 80), not 200
SELECT a.q, a.n, a.s, a.n = b.n AND a.s = b.s AS same_rows,
       a.locks AS leaf_locks_on, b.locks AS leaf_locks_off
FROM jg_rows a JOIN jg_rows b ON a.q = b.q AND a.setting = 'on' AND b.setting = 'off'
ORDER BY a.q;
-- the join on the partition key itself: the exact checks' Append also
-- prunes at each rescan, on the outer row's key, which drops no leaf: of
-- the 130 partitions left at startup, 130 leaves are probed
CREATE INDEX ON jg (k);
CREATE INDEX jg_bfk ON jg USING bloomfilter (k);
ANALYZE jg;
TRUNCATE jg_rows;
PREPARE jg_anti_k(int) AS SELECT count(*), sum(k) FROM jg_in i WHERE NOT EXISTS
    (SELECT 1 FROM jg WHERE jg.k = i.k AND jg.k >= $1);
PREPARE jg_semi_k(int) AS SELECT count(*), sum(k) FROM jg_in i WHERE EXISTS
    (SELECT 1 FROM jg WHERE jg.k = i.k AND jg.k >= $1);
-- (planned first: planning locks every partition's indexes)
SELECT count(*) FILTER (WHERE p ~ 'Bloom(Anti|Semi)Join') AS uses_filter
FROM (SELECT * FROM jp_filter('EXECUTE jg_anti_k(7000)') p
      UNION ALL SELECT * FROM jp_filter('EXECUTE jg_semi_k(7000)')) f;
SELECT jg_run('EXECUTE jg_anti_k(7000)', 'on');
SELECT jg_run('EXECUTE jg_anti_k(7000)', 'off');
SELECT jg_run('EXECUTE jg_semi_k(7000)', 'on');
SELECT jg_run('EXECUTE jg_semi_k(7000)', 'off');
SELECT a.q, a.n, a.s, a.n = b.n AND a.s = b.s AS same_rows,
       a.locks AS leaf_locks_on, b.locks AS leaf_locks_off
FROM jg_rows a JOIN jg_rows b ON a.q = b.q AND a.setting = 'on' AND b.setting = 'off'
ORDER BY a.q;
DEALLOCATE jg_anti_k;
DEALLOCATE jg_semi_k;
DEALLOCATE jg_anti;
DEALLOCATE jg_semi;
RESET plan_cache_mode;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
DROP TABLE jg_in, jg, jg_rows;
DROP FUNCTION jg_leaf_locks(), jg_run(text, text);
DROP TABLE jp_in, jp_out, jp_range, jp_list, jp_hash;
DROP FUNCTION join_check(text), jp_locks(text, text), jp_filter(text);
