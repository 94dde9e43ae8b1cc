--
-- bloom_index: the bloomfilter index access method (CREATE INDEX ... USING
-- bloomfilter) and its functions bloom_index_contains,
-- bloom_index_partitions, bloom_index_info and bloom_index_verify.
--
-- Every table turns autovacuum off: reltuples (bloom_index_info's live_rows)
-- changes only where the test says so.
--
SET client_min_messages = warning;

-- helpers: a statement's error as SQLSTATE and message; whether a plan
-- mentions an index; how many WAL records a statement writes (EXPLAIN's
-- own count, of this backend only: no other session's WAL gets in)
CREATE FUNCTION bfi_error(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
CREATE FUNCTION bfi_plan(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	line text;
	plan text := '';
BEGIN
	FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || stmt LOOP
		plan := plan || line || E'\n';
	END LOOP;
	RETURN plan;
END $$;
CREATE FUNCTION bfi_wal_records(stmt text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, WAL, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || stmt
		INTO plan;
	RETURN (plan -> 0 -> 'Plan' ->> 'WAL Records')::bigint;
END $$;

--
-- The access method, its one operator class, amvalidate, the functions
--
SELECT amname, amtype, amhandler FROM pg_am WHERE amname = 'bloomfilter';
SELECT opcname, opcintype::regtype, opcdefault, opckeytype FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomfilter');
SELECT amvalidate(oid) FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomfilter');
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict,
	   p.proparallel, p.proretset, p.prosrc
FROM pg_proc p WHERE p.proname LIKE 'bloom\_index\_%' OR p.proname = 'bf_handler'
ORDER BY 1::text COLLATE "C";

--
-- Keys of many types; expression and partial indexes
--
CREATE TABLE bfi (id int, name text, v varchar, c char(5), d numeric,
				  u uuid, ts timestamptz, b bytea, f float8, big bigint,
				  dt date, j jsonb)
	WITH (autovacuum_enabled = off);
INSERT INTO bfi
SELECT g, 'n' || g, 'v' || g, 'c' || (g % 100), g / 10.0,
	   md5(g::text)::uuid, '2024-01-01'::timestamptz + g * interval '1 minute',
	   int4send(g), g * 0.5, g::bigint * 1000000000,
	   '2000-01-01'::date + g, jsonb_build_object('k', g)
FROM generate_series(1, 5000) g;

CREATE INDEX bfi_id ON bfi USING bloomfilter (id);
CREATE INDEX bfi_name ON bfi USING bloomfilter (name) WITH (false_positive_rate = 0.001);
CREATE INDEX bfi_c ON bfi USING bloomfilter (c);
CREATE INDEX bfi_d ON bfi USING bloomfilter (d);
CREATE INDEX bfi_big ON bfi USING bloomfilter (big) WITH (capacity = 100000);
CREATE INDEX bfi_lower ON bfi USING bloomfilter (lower(name));
CREATE INDEX bfi_even ON bfi USING bloomfilter (id) WHERE id % 2 = 0;

-- every key of the table is found, for every index
SELECT indexrelid::regclass AS index, bloom_index_verify(indexrelid) AS missing
FROM pg_index WHERE indrelid = 'bfi'::regclass ORDER BY indexrelid;

-- the quoted name works without a cast; the integers are one family, and
-- the other canonical forms of the bloom type hold: varchar as text,
-- char(n) without its blanks, numeric whatever its scale
SELECT bloom_index_contains('bfi_id', 42) AS int4,
	   bloom_index_contains('bfi_id', 42::smallint) AS int2,
	   bloom_index_contains('bfi_id', 42::bigint) AS int8,
	   bloom_index_contains('bfi_big', 42000000000) AS big,
	   bloom_index_contains('bfi_name', 'n7'::varchar) AS varchar_as_text,
	   bloom_index_contains('bfi_c', 'c7   '::char(5)) AS bpchar,
	   bloom_index_contains('bfi_c', 'c7'::text) AS bpchar_as_text,
	   bloom_index_contains('bfi_d', 0.70) AS numeric,
	   bloom_index_contains('bfi_d', 0.7000) AS numeric_scale,
	   bloom_index_contains('bfi_lower', 'n7'::text) AS expression;

-- it hashes exactly as the bloom type: an index of 5,000 keys sized for
-- 5,000 (its first layer at 0.92 * 3/4 of the rate) answers every probe,
-- false positives included, as bloom_agg of the same column at that size,
-- for each key type; present counts the keys of the table found (all 5,000)
CREATE TABLE bfq AS
SELECT g AS id, 'n' || g AS name, ('v' || g)::varchar AS v, ('c' || (g % 150))::char(5) AS c,
	   g / 10.0 AS d, md5(g::text)::uuid AS u,
	   '2024-01-01'::timestamptz + g * interval '1 minute' AS ts,
	   int4send(g) AS b, (g * 0.5)::float8 AS f, g::bigint * 1000000000 AS big,
	   '2000-01-01'::date + g AS dt, jsonb_build_object('k', g) AS j
FROM generate_series(1, 20000) g;
CREATE FUNCTION bfi_agree(col text, OUT disagree bigint, OUT present bigint,
						  OUT false_positives bigint)
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('CREATE INDEX bfi_same ON bfi USING bloomfilter (%I) WITH (capacity = 5000)', col);
	EXECUTE format($q$
		SELECT count(*) FILTER (WHERE bloom_index_contains('bfi_same', q.%1$I) <> bloom_contains(s.bf, q.%1$I)),
			   count(*) FILTER (WHERE bloom_index_contains('bfi_same', q.%1$I)
							  AND q.%1$I IN (SELECT %1$I FROM bfi)),
			   count(*) FILTER (WHERE bloom_index_contains('bfi_same', q.%1$I)
							  AND q.%1$I NOT IN (SELECT %1$I FROM bfi WHERE %1$I IS NOT NULL))
		FROM bfq q, (SELECT bloom_agg(%1$I, 5000, 0.01 * 0.92 * 0.75) AS bf FROM bfi) s$q$, col)
		INTO disagree, present, false_positives;
	DROP INDEX bfi_same;
END $$;
SELECT col, a.disagree, a.present, a.false_positives > 0 AS has_false_positives
FROM unnest(ARRAY['id', 'name', 'v', 'd', 'u', 'ts', 'b', 'f', 'big', 'dt', 'j']) AS col,
	 LATERAL bfi_agree(col) a;
-- char(5): 100 distinct keys in 5,000 rows
SELECT disagree AS bpchar_disagree, present AS bpchar_present FROM bfi_agree('c');

-- the false-positive rate keeps its promise over absent keys
SELECT count(*) FILTER (WHERE bloom_index_contains('bfi_id', g)) < 100000 * 0.01 AS id_rate_ok,
	   count(*) FILTER (WHERE bloom_index_contains('bfi_name', 'n' || g)) < 100000 * 0.001 AS name_rate_ok
FROM generate_series(100001, 200000) g;
-- a partial index holds only its rows' keys: every even id, few odd ones
-- (false positives)
SELECT count(*) FILTER (WHERE bloom_index_contains('bfi_even', g)) AS evens_found,
	   count(*) FILTER (WHERE bloom_index_contains('bfi_even', g + 1)) < 2500 * 0.05 AS odds_mostly_absent
FROM generate_series(2, 5000, 2) g;
-- an expression index answers for the expression's values, not the column's
SELECT bloom_index_contains('bfi_lower', 'N7'::text) AS upper_absent_from_lower;
INSERT INTO bfi (id, name) VALUES (5001, 'MiXeD');
SELECT bloom_index_contains('bfi_lower', 'mixed'::text) AS lowered,
	   bloom_index_contains('bfi_even', 5001) AS odd_not_indexed_or_fp;

-- NULL keys are not indexed, and a NULL probe or index gives NULL
INSERT INTO bfi (id) VALUES (NULL);
SELECT bloom_index_contains('bfi_id', NULL::int) IS NULL AS null_probe,
	   bloom_index_contains(NULL, 1) IS NULL AS null_index,
	   bloom_index_contains('bfi_id', NULL::int) IS NULL AS null_typed,
	   (SELECT count(*) FROM bloom_index_partitions('bfi_id', NULL::int)) AS null_partitions,
	   bloom_index_verify('bfi_id') AS missing;

--
-- Writes: found at once, in the writing transaction too; a rollback may
-- leave bits (an extra false positive, never a lost key); COPY, UPDATE,
-- DELETE and VACUUM
--
BEGIN;
INSERT INTO bfi (id, name) VALUES (7777777, 'fresh');
SELECT bloom_index_contains('bfi_id', 7777777) AS in_xact,
	   bloom_index_contains('bfi_name', 'fresh'::text) AS name_in_xact;
ROLLBACK;
SELECT bloom_index_verify('bfi_id') AS missing;
COPY bfi (id, name) FROM stdin;
6000001	copied1
6000002	copied2
\.
SELECT bloom_index_contains('bfi_id', 6000002) AS copied,
	   bloom_index_contains('bfi_name', 'copied1'::text) AS copied_name;
UPDATE bfi SET id = id + 1000000 WHERE id <= 10;
SELECT bloom_index_contains('bfi_id', 1000005) AS updated,
	   bloom_index_verify('bfi_id') AS missing;
DELETE FROM bfi WHERE id > 1000000 AND id < 1000011;
VACUUM bfi;
SELECT bloom_index_verify('bfi_id') AS missing_after_vacuum,
	   bloom_index_contains('bfi_id', 1000005) AS deleted_key_stays;

-- keys already present write no bits: an insert of them writes as many WAL
-- records as into a table without the index, and two of the metapage (a
-- batch of many keys claims room in the newest layer, then gives back what
-- keys already there did not take); new keys are set page by page, one
-- record per page touched (and one for the claim): far fewer than the rows.
-- A transaction's keys are set before it commits, or earlier where a
-- reader must find them in the index itself, as bloom_index_info: the
-- function below counts them by calling it after its insert
CREATE TABLE bfw_plain (k int) WITH (autovacuum_enabled = off);
CREATE TABLE bfw (k int) WITH (autovacuum_enabled = off);
CREATE INDEX bfw_k ON bfw USING bloomfilter (k) WITH (capacity = 100000);
INSERT INTO bfw SELECT g FROM generate_series(1, 1000) g;
CREATE FUNCTION bfw_insert(tbl text, lo int, hi int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %I SELECT g FROM generate_series(%s, %s) g', tbl, lo, hi);
	RETURN (SELECT count(*) > 0 FROM bloom_index_info('bfw_k'));
END $$;
SELECT bfi_wal_records('SELECT bfw_insert(''bfw_plain'', 1, 1000)') AS plain,
	   bfi_wal_records('SELECT bfw_insert(''bfw'', 1, 1000)') -
	   bfi_wal_records('SELECT bfw_insert(''bfw_plain'', 1, 1000)') AS index_records_for_present_keys,
	   bfi_wal_records('SELECT bfw_insert(''bfw'', 1001, 2000)') - 1000 AS index_records_for_1000_new_keys;
DROP TABLE bfw_plain, bfw;
DROP FUNCTION bfw_insert(text, int, int);

-- a call site keeps its checks, metapage and copy of the bits for one
-- snapshot only: a PL/pgSQL loop probes an absent key through one call site
-- (copying the one-page index at the second call) and then inserts it; the
-- next statements find it (false, false, true, true)
CREATE TABLE bfs (k int);
CREATE INDEX bfs_k ON bfs USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO bfs SELECT g FROM generate_series(1, 500) g;
CREATE FUNCTION bfs_loop() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text := '';
BEGIN
	FOR i IN 1..4 LOOP
		r := r || bloom_index_contains('bfs_k', -7)::text || ' ';
		IF i = 2 THEN
			INSERT INTO bfs VALUES (-7);
		END IF;
	END LOOP;
	RETURN r;
END $$;
SELECT bfs_loop() AS answers;
DROP FUNCTION bfs_loop();
DROP TABLE bfs;

--
-- Growth: capacity 5,000, then 100,000 distinct keys (20 times as many):
-- new layers, each larger and tighter; no key lost, and the rate measured
-- over 200,000 absent keys within the requested 1%
--
CREATE TABLE bfg (k int) WITH (autovacuum_enabled = off);
CREATE INDEX bfg_k ON bfg USING bloomfilter (k) WITH (capacity = 5000, false_positive_rate = 0.01);
SELECT capacity, false_positive_rate, layers, estimated_keys, size_bytes, live_rows
FROM bloom_index_info('bfg_k');
INSERT INTO bfg SELECT g FROM generate_series(1, 100000) g;
SELECT layers, size_bytes > 8192 * 20 AS bigger,
	   estimated_keys BETWEEN 95000 AND 105000 AS keys_ok,
	   expected_rate < 0.01 AS expected_ok
FROM bloom_index_info('bfg_k');
SELECT bloom_index_verify('bfg_k') AS missing;
-- the same through one call site, which copies the layers' bits after a few
-- probes: every key found in whichever layer holds it
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('bfg_k', g)) AS missed
FROM generate_series(1, 100000) g;
SELECT count(*) FILTER (WHERE bloom_index_contains('bfg_k', g)) AS false_positives,
	   count(*) FILTER (WHERE bloom_index_contains('bfg_k', g)) <= 200000 * 0.01 AS rate_ok
FROM generate_series(1000001, 1200000) g;
-- keys present in one of the two layers before the newest write no index
-- WAL either (an insert reads those two; a record or two may come from a key
-- that an older layer answered with a false positive when it was first
-- inserted, and which is set now); keys of the first layer, three layers
-- before the newest, are set again in the newest; the repeated rows are
-- deleted again
CREATE TABLE bfg_plain (k int) WITH (autovacuum_enabled = off);
CREATE FUNCTION bfg_insert(tbl text, lo int, hi int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %I SELECT g FROM generate_series(%s, %s) g', tbl, lo, hi);
	RETURN (SELECT count(*) > 0 FROM bloom_index_info('bfg_k'));
END $$;
SELECT bfi_wal_records('SELECT bfg_insert(''bfg_plain'', 40001, 42000)') AS plain,
	   bfi_wal_records('SELECT bfg_insert(''bfg'', 40001, 42000)') - 2000 < 5 AS fourth_layer_few_records,
	   bfi_wal_records('SELECT bfg_insert(''bfg'', 1, 2000)') > 2000 AS first_layer_set_again;
DELETE FROM bfg WHERE ctid IN (SELECT ctid FROM bfg ORDER BY ctid DESC LIMIT 4000);
SELECT count(*) AS rows_again FROM bfg;
DROP FUNCTION bfg_insert(text, int, int);
DROP TABLE bfg_plain;

-- staleness: after most rows are deleted, at least that share of the
-- index's keys is stale; VACUUM compacts the index (it has several layers):
-- one layer for the rows left, no stale keys, every key found; without its
-- capacity option, REINDEX rebuilds it at the table's size (twice its live
-- rows), in one layer
DELETE FROM bfg WHERE k > 10000;
ANALYZE bfg;
SELECT live_rows, stale_fraction > 0.85 AS stale FROM bloom_index_info('bfg_k');
-- (first, up to a minute, until no other session of this database holds
-- back the horizon: on a busy machine an autovacuum ANALYZE of another
-- test's table kept the deleted rows recently dead, so that VACUUM and then
-- REINDEX still indexed them)
DO $$
BEGIN
	FOR i IN 1 .. 600 LOOP
		PERFORM pg_stat_clear_snapshot();
		EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()
			AND backend_xmin IS NOT NULL);
		PERFORM pg_sleep(0.1);
	END LOOP;
END $$;
VACUUM bfg;
SELECT layers, capacity, stale_fraction, size_bytes < 8192 * 10 AS small,
	   bloom_index_verify('bfg_k') AS missing
FROM bloom_index_info('bfg_k');
ALTER INDEX bfg_k RESET (capacity);
REINDEX INDEX bfg_k;
SELECT capacity, layers, stale_fraction, bloom_index_verify('bfg_k') AS missing
FROM bloom_index_info('bfg_k');
-- TRUNCATE empties it
TRUNCATE bfg;
SELECT bloom_index_contains('bfg_k', 1) AS after_truncate, layers FROM bloom_index_info('bfg_k');

-- the pages a compaction frees at the file's end are given back, unless the
-- table's vacuum_truncate is off (the truncation's lock, replayed on a hot
-- standby, cancels the standby's queries of the index): the file keeps
-- them, and the first VACUUM after the option is reset gives them back
CREATE TABLE bft (k int) WITH (autovacuum_enabled = off, vacuum_truncate = false);
CREATE INDEX bft_k ON bft USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO bft SELECT g FROM generate_series(1, 20000) g;
SELECT layers AS grown_layers, size_bytes AS grown FROM bloom_index_info('bft_k') \gset
SELECT :grown_layers > 3 AS grown;
DELETE FROM bft WHERE k > 500;
VACUUM bft;
SELECT layers, size_bytes >= :grown AS kept_its_pages, bloom_index_verify('bft_k') AS missing
FROM bloom_index_info('bft_k');
ALTER TABLE bft RESET (vacuum_truncate);
VACUUM bft;
SELECT layers, size_bytes < :grown / 4 AS gave_them_back, bloom_index_verify('bft_k') AS missing
FROM bloom_index_info('bft_k');
DROP TABLE bft;

-- default capacity: twice the table's rows at build, at least 1,000
CREATE TABLE bfe (k int) WITH (autovacuum_enabled = off);
CREATE INDEX bfe_k ON bfe USING bloomfilter (k);
SELECT capacity, layers, estimated_keys FROM bloom_index_info('bfe_k');
SELECT bloom_index_contains('bfe_k', 1) AS empty;
INSERT INTO bfg SELECT g FROM generate_series(1, 50000) g;
ANALYZE bfg;
CREATE INDEX bfg_k2 ON bfg USING bloomfilter (k);
SELECT capacity, layers FROM bloom_index_info('bfg_k2');

-- CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY; the rebuilt index has
-- a new OID, and a probe of the old one says it is gone
CREATE INDEX CONCURRENTLY bfg_k3 ON bfg USING bloomfilter (k);
SELECT 'bfg_k3'::regclass::oid AS old_oid \gset
REINDEX INDEX CONCURRENTLY bfg_k3;
SELECT bloom_index_verify('bfg_k3') AS missing, bloom_index_contains('bfg_k3', 777) AS found;
SELECT bfi_error(format('SELECT bloom_index_contains(%s::oid::regclass, 1)', :old_oid))
	= format('42704: index with OID %s does not exist', :old_oid) AS old_oid_gone;

-- unlogged and temporary tables
CREATE UNLOGGED TABLE bfu (k text);
CREATE INDEX bfu_k ON bfu USING bloomfilter (k);
INSERT INTO bfu VALUES ('a'), ('b');
SELECT bloom_index_contains('bfu_k', 'a'::text) AS a, bloom_index_verify('bfu_k') AS missing;
CREATE TEMP TABLE bft (k text);
CREATE INDEX bft_k ON bft USING bloomfilter (k) WITH (capacity = 10);
INSERT INTO bft SELECT 'k' || g FROM generate_series(1, 1000) g;
SELECT bloom_index_contains('bft_k', 'k500'::text) AS t, layers > 1 AS grew,
	   bloom_index_verify('bft_k') AS missing
FROM bloom_index_info('bft_k');

--
-- Partitioned tables: the parent's index is one per partition; it answers
-- for the whole table, and bloom_index_partitions names the partitions
-- that may hold a key
--
CREATE TABLE bfp (region int, k int) PARTITION BY LIST (region);
CREATE TABLE bfp1 PARTITION OF bfp FOR VALUES IN (1);
CREATE TABLE bfp2 PARTITION OF bfp FOR VALUES IN (2);
CREATE TABLE bfp3 PARTITION OF bfp FOR VALUES IN (3);
CREATE INDEX bfp_k ON bfp USING bloomfilter (k) WITH (false_positive_rate = 0.0001);
INSERT INTO bfp SELECT 1, g FROM generate_series(1, 1000) g;
INSERT INTO bfp SELECT 2, g FROM generate_series(1001, 2000) g;
INSERT INTO bfp VALUES (3, 1500);
SELECT bloom_index_contains('bfp_k', 5) AS in_p1,
	   bloom_index_contains('bfp_k', 1500) AS in_p2,
	   bloom_index_contains('bfp_k', 999999) AS nowhere;
SELECT * FROM bloom_index_partitions('bfp_k', 1500) ORDER BY 1;
SELECT * FROM bloom_index_partitions('bfp_k', 5);
SELECT count(*) AS nowhere FROM bloom_index_partitions('bfp_k', 999999);
SELECT indexrelid, capacity, layers FROM bloom_index_info('bfp_k') ORDER BY 1;
SELECT bloom_index_verify('bfp_k') AS missing;
-- every key of every partition, through the parent
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('bfp_k', k)) AS missed FROM bfp;
-- a partition attached later gets its index; a partition's index works alone
CREATE TABLE bfp4 (region int, k int);
INSERT INTO bfp4 VALUES (4, 424242);
ALTER TABLE bfp ATTACH PARTITION bfp4 FOR VALUES IN (4);
SELECT * FROM bloom_index_partitions('bfp_k', 424242);
SELECT bloom_index_contains('bfp2_k_idx', 1500) AS leaf,
	   bloom_index_contains('bfp1_k_idx', 1500) AS not_in_leaf;

--
-- The planner never uses it for a scan, even with every other way off
--
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT bfi_plan('SELECT * FROM bfg WHERE k = 42') !~ 'bfg_k' AS eq_not_indexed,
	   bfi_plan('SELECT * FROM bfg WHERE k = 42') ~ 'Seq Scan on bfg' AS seq_scan,
	   bfi_plan('SELECT * FROM bfg ORDER BY k') !~ 'bfg_k' AS order_not_indexed,
	   bfi_plan('SELECT * FROM bfp WHERE k = 42') !~ 'k_idx' AS partitions_not_indexed;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- Errors, each with its SQLSTATE
--
CREATE INDEX bfi_btree ON bfi (id);
CREATE INDEX bfp_btree ON bfp (k);
SELECT stmt, bfi_error(stmt) FROM (VALUES
	('SELECT bloom_index_contains(''bfi_id'', ''x''::text)'),
	('SELECT bloom_index_contains(''bfi_name'', 42)'),
	('SELECT bloom_index_contains(''bfi'', 1)'),
	('SELECT bloom_index_contains(''bfi_btree'', 1)'),
	('SELECT bloom_index_contains(''bfp_btree'', 1)'),
	('SELECT bloom_index_verify(''bfi_btree'')'),
	('SELECT * FROM bloom_index_info(''bfi'')'),
	('SELECT * FROM bloom_index_partitions(''bfi_btree'', 1)'),
	('SELECT bloom_index_contains(''no_such_index'', 1)'),
	('SELECT bloom_index_contains(0::oid::regclass, 1)'),
	('SELECT * FROM bfi WHERE id = 1 AND bloom_index_contains(''bfi_id'', point(1, 1))'),
	('CREATE INDEX ON bfi USING bloomfilter (id, name)'),
	('CREATE INDEX ON bfi USING bloomfilter (point(id, id))'),
	('CREATE INDEX ON bfi USING bloomfilter (id) INCLUDE (name)'),
	('CREATE UNIQUE INDEX ON bfi USING bloomfilter (id)'),
	('CREATE INDEX ON bfi USING bloomfilter (id) WITH (false_positive_rate = 1)'),
	('CREATE INDEX ON bfi USING bloomfilter (id) WITH (false_positive_rate = 0)'),
	('CREATE INDEX ON bfi USING bloomfilter (id) WITH (capacity = 0)'),
	('CREATE INDEX ON bfi USING bloomfilter (id) WITH (capacity = 500000000, false_positive_rate = 0.000001)'),
	('CREATE INDEX ON bfi USING bloomfilter (id) WITH (bogus = 1)'),
	('CLUSTER bfi USING bfi_id'),
	('ALTER TABLE bfi ADD CONSTRAINT bfi_excl EXCLUDE USING bloomfilter (id WITH =)')
) AS t(stmt);
-- the whole messages of the extension's own errors
\set VERBOSITY default
SELECT bloom_index_contains('bfi_id', 'x'::text);
SELECT bloom_index_contains('bfi_btree', 1);
SELECT bloom_index_contains('bfi', 1);
CREATE INDEX ON bfi USING bloomfilter (point(id, id));
CREATE INDEX ON bfi USING bloomfilter (id) WITH (false_positive_rate = 1);
CREATE INDEX ON bfi USING bloomfilter (id) WITH (capacity = 500000000, false_positive_rate = 0.000001);

-- another role must be able to read the table
CREATE ROLE regress_bfi_reader;
SET ROLE regress_bfi_reader;
SELECT bfi_error('SELECT bloom_index_contains(''bfi_id'', 1)') AS no_select;
SELECT bfi_error('SELECT bloom_index_verify(''bfi_id'')') AS no_select_verify;
SELECT bfi_error('SELECT * FROM bloom_index_info(''bfp_k'')') AS no_select_info;
RESET ROLE;
GRANT SELECT ON bfi TO regress_bfi_reader;
SET ROLE regress_bfi_reader;
SELECT bloom_index_contains('bfi_id', 1) AS with_select;
RESET ROLE;
DROP OWNED BY regress_bfi_reader;
DROP ROLE regress_bfi_reader;

DROP TABLE bfi, bfq, bfg, bfe, bfu, bft, bfp;
DROP FUNCTION bfi_error(text), bfi_plan(text), bfi_wal_records(text), bfi_agree(text);
