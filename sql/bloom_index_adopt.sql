--
-- bloom_index_adopt: a partitioned bloomfilter index keeps the rate it
-- promises through the leaf indexes PostgreSQL adopts into it.  ATTACH
-- PARTITION, and CREATE INDEX on the partitioned table over an index a
-- partition already has, adopt the partition's index whatever its options;
-- a leaf built at a higher false_positive_rate answers "maybe" above the
-- parent's.  Probes through the parent refuse such a leaf (55000, naming
-- it, with the fix), bloom_index_info's advice names it and the fix, and
-- the leaf probed by itself keeps working.  A leaf at a lower rate, or of
-- another capacity, keeps the promise and is read.
--
SET client_min_messages = warning;

CREATE FUNCTION bad_error(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

--
-- 1. ATTACH PARTITION
--
CREATE TABLE bad (k int) PARTITION BY RANGE (k);
-- (the btree the join pre-check's exact check needs: no advice about it)
CREATE INDEX bad_k_bt ON bad (k);
CREATE TABLE bad1 PARTITION OF bad FOR VALUES FROM (0) TO (100000);
CREATE INDEX bad_bf ON bad USING bloomfilter (k) WITH (false_positive_rate = 0.01);
-- a partition whose own index was built at 40 %
CREATE TABLE bad2 (k int);
INSERT INTO bad2 SELECT generate_series(100000, 100999);
CREATE INDEX bad2_bf ON bad2 USING bloomfilter (k)
	WITH (capacity = 1000, false_positive_rate = 0.4);
ALTER TABLE bad ATTACH PARTITION bad2 FOR VALUES FROM (100000) TO (200000);
INSERT INTO bad1 SELECT generate_series(0, 999);
-- PostgreSQL adopted it
SELECT c.relname, p.relname AS parent
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
	JOIN pg_class p ON p.oid = i.inhparent
WHERE p.relname = 'bad_bf' ORDER BY 1;
-- what that leaf answers: "maybe" for far more than 1 % of absent keys
SELECT count(*) FILTER (WHERE bloom_index_contains('bad2_bf', g)) > 200 AS above_one_percent
FROM generate_series(200000, 200999) g;
-- probes through the parent refuse it
\set VERBOSITY default
SELECT bloom_index_contains('bad_bf', 5);
\set VERBOSITY terse
SELECT bad_error($$SELECT * FROM bloom_index_partitions('bad_bf', 5)$$) AS partitions,
       bad_error($$SELECT count(*) FROM bloom_index_filters('bad_bf')$$) AS filters;
-- a call site over rows refuses it too (the bulk probe path)
SELECT bad_error($$SELECT count(*) FROM generate_series(1, 100) g WHERE bloom_index_contains('bad_bf', g)$$) AS bulk;
-- bloom_index_info names the leaf and what to do; verify still counts
SELECT indexrelid, false_positive_rate, advice
FROM bloom_index_info('bad_bf') ORDER BY indexrelid::text;
SELECT bloom_index_verify('bad_bf') AS missing;
-- the leaf by itself keeps its own promise
SELECT bloom_index_contains('bad2_bf', 100005) AS leaf_alone,
       (SELECT advice FROM bloom_index_info('bad2_bf')) AS leaf_advice;
-- the hint's fix
ALTER INDEX bad2_bf SET (false_positive_rate = 0.01);
REINDEX INDEX bad2_bf;
SELECT bloom_index_contains('bad_bf', 5) AS present,
       bloom_index_contains('bad_bf', 100005) AS present_in_bad2,
       (SELECT count(*) FROM bloom_index_info('bad_bf') WHERE advice IS NOT NULL) AS advice_left;

--
-- 2. CREATE INDEX on the partitioned table over an index a partition has
--
CREATE TABLE bac (k bigint) PARTITION BY LIST (k);
-- (the btree the join pre-check's exact check needs: no advice about it)
CREATE INDEX bac_k_bt ON bac (k);
CREATE TABLE bac1 PARTITION OF bac FOR VALUES IN (1, 2, 3);
CREATE TABLE bac2 PARTITION OF bac FOR VALUES IN (4, 5, 6);
INSERT INTO bac VALUES (1), (2), (4), (5);
CREATE INDEX bac2_bf ON bac2 USING bloomfilter (k) WITH (false_positive_rate = 0.5);
-- (no options: the parent promises the default, 0.01)
CREATE INDEX bac_bf ON bac USING bloomfilter (k);
SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'bac_bf'::regclass ORDER BY 1;
SELECT bad_error($$SELECT bloom_index_contains('bac_bf', 4)$$) AS probe;
SELECT indexrelid, advice IS NOT NULL AS advised
FROM bloom_index_info('bac_bf') ORDER BY indexrelid::text;

--
-- 3. What keeps the promise: a lower rate, another capacity, the same
--    rate given or taken by default
--
CREATE TABLE bak (k int) PARTITION BY RANGE (k);
-- (the btree the join pre-check's exact check needs: no advice about it)
CREATE INDEX bak_k_bt ON bak (k);
CREATE TABLE bak1 (k int);
CREATE INDEX bak1_bf ON bak1 USING bloomfilter (k) WITH (false_positive_rate = 0.001);
CREATE TABLE bak2 (k int);
CREATE INDEX bak2_bf ON bak2 USING bloomfilter (k) WITH (capacity = 10);
CREATE TABLE bak3 (k int);
CREATE INDEX bak3_bf ON bak3 USING bloomfilter (k) WITH (capacity = 1000000, false_positive_rate = 0.01);
ALTER TABLE bak ATTACH PARTITION bak1 FOR VALUES FROM (0) TO (100);
ALTER TABLE bak ATTACH PARTITION bak2 FOR VALUES FROM (100) TO (200);
CREATE INDEX bak_bf ON bak USING bloomfilter (k) WITH (false_positive_rate = 0.01);
ALTER TABLE bak ATTACH PARTITION bak3 FOR VALUES FROM (200) TO (300);
INSERT INTO bak SELECT generate_series(0, 299);
SELECT count(*) FILTER (WHERE bloom_index_contains('bak_bf', g)) AS found,
       count(*) FILTER (WHERE NOT bloom_index_contains('bak_bf', g)) AS missing
FROM generate_series(0, 299) g;
SELECT count(*) AS partitions_of_5 FROM bloom_index_partitions('bak_bf', 5);
SELECT count(*) AS advised FROM bloom_index_info('bak_bf') WHERE advice LIKE '%promises%';

--
-- 4. The hint's rate is exact: following it keeps the promise (a rate of
--    many digits printed with %g read 0.0123457, above it)
--
CREATE TABLE bah (k int) PARTITION BY LIST (k);
CREATE TABLE bah1 (k int);
INSERT INTO bah1 VALUES (1);
CREATE INDEX bah1_bf ON bah1 USING bloomfilter (k) WITH (false_positive_rate = 0.1);
ALTER TABLE bah ATTACH PARTITION bah1 FOR VALUES IN (1);
CREATE INDEX bah_bf ON bah USING bloomfilter (k) WITH (false_positive_rate = 0.0123456789);
SELECT bad_error($$SELECT bloom_index_contains('bah_bf', 1)$$) AS probe;
DO $$
DECLARE
	hint text;
BEGIN
	PERFORM bloom_index_contains('bah_bf', 1);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	EXECUTE substring(hint FROM 'ALTER INDEX [^;]*;');
	EXECUTE substring(hint FROM 'REINDEX INDEX [^;]*;');
END $$;
SELECT bloom_index_contains('bah_bf', 1) AS after_hint;

--
-- 5. A sub-partitioned tree whose middle index promises less than the top
--    one: the hint names the strictest rate above the leaf, so that its fix
--    lets probes through the middle index too (before: it named the top's
--    0.05, and probes through the middle were refused after the fix)
--
CREATE TABLE bas (k int) PARTITION BY RANGE (k);
CREATE TABLE basm PARTITION OF bas FOR VALUES FROM (0) TO (1000) PARTITION BY RANGE (k);
CREATE INDEX basm_bf ON basm USING bloomfilter (k) WITH (false_positive_rate = 0.01);
CREATE INDEX bas_bf ON bas USING bloomfilter (k) WITH (false_positive_rate = 0.05);
CREATE TABLE basm1 (k int);
INSERT INTO basm1 VALUES (1);
CREATE INDEX basm1_bf ON basm1 USING bloomfilter (k) WITH (false_positive_rate = 0.06);
ALTER TABLE basm ATTACH PARTITION basm1 FOR VALUES FROM (0) TO (1000);
\set VERBOSITY default
SELECT bloom_index_contains('bas_bf', 1);
\set VERBOSITY terse
DO $$
DECLARE
	hint text;
BEGIN
	PERFORM bloom_index_contains('bas_bf', 1);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	EXECUTE substring(hint FROM 'ALTER INDEX [^;]*;');
	EXECUTE substring(hint FROM 'REINDEX INDEX [^;]*;');
END $$;
SELECT bad_error($$SELECT bloom_index_contains('bas_bf', 1)$$) AS through_top,
       bad_error($$SELECT bloom_index_contains('basm_bf', 1)$$) AS through_middle;

DROP TABLE bad, bac, bak, bah, bas;
DROP FUNCTION bad_error(text);
