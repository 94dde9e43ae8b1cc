--
-- test/bench/pending.sql: what a transaction's kept keys cost (issue 37,
-- items 1 and 3).  Run against a scratch database with the extension:
--   psql -X -d DB -v rows=2000000 -f test/bench/pending.sql
-- It prints, all from this run:
--  - the memory of the context "bloomfilter pending hashes" (and
--    TopTransactionContext) during one INSERT of :rows rows into a table
--    hash-partitioned 160 ways, each partition with a bloomfilter index:
--    at most about 4.2 MB whatever :rows (the rest goes to a temporary file);
--  - the time of one INSERT of :rows rows with its commit into a table with
--    a bloomfilter index, and of the same INSERT into a plain table (three
--    of each, alternated: compare the best of each);
--  - the share of a rolled-back batch of 150,000 new keys that then answers
--    "maybe", against the share of never-inserted keys (the index's rate).
-- About a minute at the default 2,000,000 rows on 2 cores.
--
\if :{?rows}
\else
\set rows 2000000
\endif
SET client_min_messages = warning;
DROP TABLE IF EXISTS bp_part, bp_plain, bp_idx, bp_roll;

-- 1. pending memory across 160 partitions' indexes
CREATE TABLE bp_part (k bigint) PARTITION BY HASH (k);
DO $$
BEGIN
	FOR i IN 0..159 LOOP
		EXECUTE format('CREATE TABLE bp_part_%s PARTITION OF bp_part FOR VALUES WITH (MODULUS 160, REMAINDER %s) WITH (autovacuum_enabled = off)', i, i);
	END LOOP;
END $$;
CREATE INDEX bp_part_k ON bp_part USING bloomfilter (k) WITH (capacity = 10000);
BEGIN;
INSERT INTO bp_part SELECT g FROM generate_series(1, :rows) g;
SELECT :rows AS rows_into_160_partitions, name, sum(total_bytes) AS bytes
FROM pg_backend_memory_contexts
WHERE name IN ('TopTransactionContext', 'bloomfilter pending hashes')
GROUP BY name ORDER BY name;
COMMIT;
SELECT bloom_index_verify('bp_part_k') AS missing_after_commit;
DROP TABLE bp_part;

-- 2. a bulk INSERT with its commit (autocommit: psql's timing includes the
-- commit, where the keys are set): indexed against plain, alternated
CREATE TABLE bp_plain (k bigint) WITH (autovacuum_enabled = off);
CREATE TABLE bp_idx (k bigint) WITH (autovacuum_enabled = off);
CREATE INDEX bp_idx_k ON bp_idx USING bloomfilter (k) WITH (capacity = 4000000);
\timing on
INSERT INTO bp_plain SELECT g FROM generate_series(1, :rows) g;
TRUNCATE bp_plain;
INSERT INTO bp_idx SELECT g FROM generate_series(1, :rows) g;
TRUNCATE bp_idx;
INSERT INTO bp_plain SELECT g FROM generate_series(1, :rows) g;
TRUNCATE bp_plain;
INSERT INTO bp_idx SELECT g FROM generate_series(1, :rows) g;
TRUNCATE bp_idx;
INSERT INTO bp_plain SELECT g FROM generate_series(1, :rows) g;
TRUNCATE bp_plain;
INSERT INTO bp_idx SELECT g FROM generate_series(1, :rows) g;
\timing off

-- 3. a rolled-back batch
CREATE TABLE bp_roll (k bigint) WITH (autovacuum_enabled = off);
CREATE INDEX bp_roll_k ON bp_roll USING bloomfilter (k)
	WITH (capacity = 200000, false_positive_rate = 0.01);
INSERT INTO bp_roll SELECT g FROM generate_series(1, 100000) g;
BEGIN;
INSERT INTO bp_roll SELECT g FROM generate_series(1000001, 1150000) g;
ROLLBACK;
SELECT round(count(*) FILTER (WHERE bloom_index_contains('bp_roll_k', g)) / 1500.0, 3) AS rolled_back_maybe_pct
FROM generate_series(1000001, 1150000) g;
SELECT round(count(*) FILTER (WHERE bloom_index_contains('bp_roll_k', g)) / 1500.0, 3) AS never_inserted_maybe_pct
FROM generate_series(5000001, 5150000) g;
DROP TABLE bp_plain, bp_idx, bp_roll;
