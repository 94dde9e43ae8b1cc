--
-- bloom_index_maintenance: VACUUM (manual, parallel, FREEZE) never fails
-- because of a bloomfilter index, whatever state the index is in, and what
-- changes under an index (enum labels added, even by a transaction that
-- rolls back) stops no write for a reason that changes no key's hash.
--
CREATE FUNCTION bfm_error(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END $$;

--
-- 1. An enum label added by a transaction that rolls back.  The index's
-- label guard records only committed labels: keys of a label this
-- transaction added cannot exist before it commits.
--
CREATE TYPE bfm_mood AS ENUM ('sad', 'ok');
CREATE TABLE bfm_e (m bfm_mood);
CREATE INDEX bfm_e_m ON bfm_e USING bloomfilter (m);
INSERT INTO bfm_e VALUES ('sad');
BEGIN;
ALTER TYPE bfm_mood ADD VALUE 'happy';
INSERT INTO bfm_e VALUES ('ok');
ROLLBACK;
-- a read of the index in such a transaction
BEGIN;
ALTER TYPE bfm_mood ADD VALUE 'glad';
SELECT count(*) AS filters FROM bloom_index_filters('bfm_e_m');
SELECT bloom_index_contains('bfm_e_m', 'sad'::bfm_mood) AS sad_found;
ROLLBACK;
-- inserts and probes go on
INSERT INTO bfm_e VALUES ('ok');
SELECT bloom_index_contains('bfm_e_m', 'ok'::bfm_mood) AS ok_found,
	   bloom_index_verify('bfm_e_m') AS missing;
-- a label added and committed is recorded before its keys go in, and a
-- rename of it is refused, never answered "absent"
ALTER TYPE bfm_mood ADD VALUE 'happy';
INSERT INTO bfm_e VALUES ('happy');
ALTER TYPE bfm_mood RENAME VALUE 'happy' TO 'joyful';
SELECT bfm_error($$SELECT bloom_index_contains('bfm_e_m', 'joyful'::bfm_mood)$$) AS renamed;
SELECT bfm_error($$INSERT INTO bfm_e VALUES ('sad')$$) AS insert_after_rename;
DROP TABLE bfm_e;
DROP TYPE bfm_mood;
-- many labels added at once (a migration): inserts and probes go on
DO $$
BEGIN
	EXECUTE 'CREATE TYPE bfm_big AS ENUM (' ||
		(SELECT string_agg(quote_literal('b' || g), ', ') FROM generate_series(1, 50) g) || ')';
END $$;
CREATE TABLE bfm_b (m bfm_big);
CREATE INDEX bfm_b_m ON bfm_b USING bloomfilter (m);
INSERT INTO bfm_b SELECT unnest(enum_range(NULL::bfm_big));
BEGIN;
DO $$
BEGIN
	FOR i IN 51 .. 60 LOOP
		EXECUTE format('ALTER TYPE bfm_big ADD VALUE %L', 'b' || i);
	END LOOP;
END $$;
COMMIT;
INSERT INTO bfm_b VALUES ('b55');
SELECT bloom_index_contains('bfm_b_m', 'b55'::bfm_big) AS b55_found,
	   bloom_index_verify('bfm_b_m') AS missing;
DROP TABLE bfm_b;
DROP TYPE bfm_big;
-- the labels of a type created in the same transaction as the index count
BEGIN;
CREATE TYPE bfm_new AS ENUM ('a');
CREATE TABLE bfm_n (m bfm_new);
CREATE INDEX bfm_n_m ON bfm_n USING bloomfilter (m);
INSERT INTO bfm_n VALUES ('a');
COMMIT;
ALTER TYPE bfm_new RENAME VALUE 'a' TO 'z';
SELECT bfm_error($$SELECT bloom_index_contains('bfm_n_m', 'z'::bfm_new)$$) AS renamed;
DROP TABLE bfm_n;
DROP TYPE bfm_new;

--
-- 2. VACUUM with the table's other indexes vacuumed in parallel.  The
-- index's cleanup then runs in parallel mode, where its truncation's
-- ACCESS EXCLUSIVE lock cannot be WAL-logged: the compaction is done, the
-- free pages stay until a VACUUM that is not parallel.
--
CREATE TABLE bfm_p (k int, a int, b int) WITH (autovacuum_enabled = off);
CREATE INDEX bfm_p_a ON bfm_p (a);
CREATE INDEX bfm_p_b ON bfm_p (b);
CREATE INDEX bfm_p_kb ON bfm_p (k);	-- (else the advice asks for one, for the join pre-check)
CREATE INDEX bfm_p_k ON bfm_p USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO bfm_p SELECT g, g, g FROM generate_series(1, 20000) g;
SELECT layers FROM bloom_index_info('bfm_p_k');
SELECT relfrozenxid AS frozen_before FROM pg_class WHERE relname = 'bfm_p' \gset
SET min_parallel_index_scan_size = 0;
SET max_parallel_maintenance_workers = 2;
VACUUM (FREEZE, PARALLEL 2) bfm_p;
SELECT relfrozenxid::text <> :'frozen_before' AS frozen_advanced
FROM pg_class WHERE relname = 'bfm_p';
SELECT layers, advice LIKE '%pages are free%' AS pages_free,
	   bloom_index_verify('bfm_p_k') AS missing
FROM bloom_index_info('bfm_p_k');
-- more layers, compacted by a parallel VACUUM again
INSERT INTO bfm_p SELECT g, g, g FROM generate_series(20001, 60000) g;
VACUUM (PARALLEL 2) bfm_p;
SELECT layers, bloom_index_verify('bfm_p_k') AS missing FROM bloom_index_info('bfm_p_k');
-- a VACUUM that is not parallel gives the pages back
VACUUM (PARALLEL 0) bfm_p;
SELECT layers, advice IS NULL AS in_shape FROM bloom_index_info('bfm_p_k');
RESET min_parallel_index_scan_size;
RESET max_parallel_maintenance_workers;
DROP TABLE bfm_p;

--
-- 3. VACUUM after the key's enum type is renamed: the index's keys were
-- hashed under the old name (the family), so probes and inserts are refused
-- until a REINDEX; VACUUM goes on without compacting it, and says so.
--
DO $$
BEGIN
	EXECUTE 'CREATE TYPE bfm_many AS ENUM (' ||
		(SELECT string_agg(quote_literal('l' || g), ', ') FROM generate_series(1, 3000) g) || ')';
END $$;
CREATE TABLE bfm_c (c bfm_many) WITH (autovacuum_enabled = off);
CREATE INDEX bfm_c_c ON bfm_c USING bloomfilter (c) WITH (capacity = 1000);
CREATE INDEX bfm_c_b ON bfm_c (c);
INSERT INTO bfm_c SELECT ('l' || g)::bfm_many FROM generate_series(1, 3000) g;
SELECT layers > 1 AS several_layers FROM bloom_index_info('bfm_c_c');
ALTER TYPE bfm_many RENAME TO bfm_many2;
VACUUM bfm_c;
VACUUM (FREEZE) bfm_c;
SELECT layers > 1 AS still_several_layers,
	   advice LIKE 'Its keys no longer hash as they did%REINDEX.' AS advice_reindex
FROM bloom_index_info('bfm_c_c');
SELECT bfm_error($$SELECT bloom_index_contains('bfm_c_c', 'l1'::bfm_many2)$$) AS probe;
REINDEX INDEX bfm_c_c;
VACUUM bfm_c;
SELECT layers, advice IS NULL AS in_shape, bloom_index_verify('bfm_c_c') AS missing
FROM bloom_index_info('bfm_c_c');
DROP TABLE bfm_c;
DROP TYPE bfm_many2;

--
-- 4. An index expression that fails in VACUUM (here: when a setting of the
-- VACUUM's session says so; in the field: a function that depends on the
-- search_path, or that fails on some row).  The compaction's scan evaluates
-- it on every row (a btree's VACUUM never does): the failure is caught, the
-- compaction given up with a warning, the index keeps its layers, and
-- VACUUM goes on.  In parallel mode, where a failure could not be caught,
-- an index on an expression is not compacted at all.
--
CREATE FUNCTION bfm_key(k int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	IF current_setting('bfm.fail', true) = 'on' THEN
		RAISE EXCEPTION 'bfm_key cannot hash %', k;
	END IF;
	RETURN k;
END $$;
CREATE TABLE bfm_x (k int, a int, b int) WITH (autovacuum_enabled = off);
CREATE INDEX bfm_x_a ON bfm_x (a);
CREATE INDEX bfm_x_b ON bfm_x (b);
CREATE INDEX bfm_x_k ON bfm_x USING bloomfilter (bfm_key(k)) WITH (capacity = 1000);
INSERT INTO bfm_x SELECT g, g, g FROM generate_series(1, 5000) g;
SET bfm.fail = on;
SELECT relfrozenxid AS frozen_before FROM pg_class WHERE relname = 'bfm_x' \gset
VACUUM (FREEZE, PARALLEL 0) bfm_x;
SELECT relfrozenxid::text <> :'frozen_before' AS frozen_advanced
FROM pg_class WHERE relname = 'bfm_x';
SELECT layers AS layers_after_failure,
	   advice LIKE 'A compaction was cut off or is under way%' AS under_way
FROM bloom_index_info('bfm_x_k') \gset
SELECT :layers_after_failure > 1 AS still_several_layers, :'under_way' AS under_way;
-- more failing VACUUMs: the compaction stays under way, no layer is added
VACUUM (PARALLEL 0) bfm_x;
VACUUM (PARALLEL 0) bfm_x;
SELECT layers = :layers_after_failure AS no_layer_added FROM bloom_index_info('bfm_x_k');
SET min_parallel_index_scan_size = 0;
VACUUM (PARALLEL 2) bfm_x;
RESET min_parallel_index_scan_size;
RESET bfm.fail;
VACUUM (PARALLEL 0) bfm_x;
SELECT layers, bloom_index_verify('bfm_x_k') AS missing FROM bloom_index_info('bfm_x_k');
DROP TABLE bfm_x;
DROP FUNCTION bfm_key(int);

--
-- 6. An index whose rows are mostly deleted is compacted by a plain VACUUM,
-- which skips the all-visible pages of the rows left and so only estimates
-- the table's live rows (review round 5: the rule took a count only, and
-- only VACUUM (DISABLE_PAGE_SKIPPING) compacted the index).
--
CREATE TABLE bfm_stale (k int) WITH (autovacuum_enabled = off);
INSERT INTO bfm_stale SELECT g FROM generate_series(1, 200000) g;
CREATE INDEX bfm_stale_k ON bfm_stale USING bloomfilter (k) WITH (capacity = 1000);
VACUUM bfm_stale;
SELECT layers, estimated_keys > 150000 AS all_keys FROM bloom_index_info('bfm_stale_k');
DELETE FROM bfm_stale WHERE k > 20000;
VACUUM bfm_stale;
SELECT layers, estimated_keys < 30000 AS compacted, bloom_index_verify('bfm_stale_k') AS missing,
	   advice IS NULL OR advice NOT LIKE '%compacts it%' AS no_compaction_advised
FROM bloom_index_info('bfm_stale_k');
-- and the next VACUUM leaves it
VACUUM bfm_stale;
SELECT layers, estimated_keys < 30000 AS compacted FROM bloom_index_info('bfm_stale_k');
DROP TABLE bfm_stale;

-- A VACUUM that removes no row and reads no page (COPY FREEZE after a
-- TRUNCATE: every page all-visible, reltuples unknown) estimates no live
-- rows: its estimate is not taken, and it does not compact the index, again
-- and again (review round 6)
CREATE TABLE bfm_frozen (k int) WITH (autovacuum_enabled = off);
CREATE INDEX bfm_frozen_k ON bfm_frozen USING bloomfilter (k) WITH (capacity = 20000);
BEGIN;
TRUNCATE bfm_frozen;
COPY bfm_frozen FROM PROGRAM 'seq 1 10000' WITH (FREEZE);
COMMIT;
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS scans_before FROM pg_stat_user_tables WHERE relname = 'bfm_frozen' \gset
VACUUM bfm_frozen;
VACUUM bfm_frozen;
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :scans_before AS compaction_scans, bloom_index_verify('bfm_frozen_k') AS missing
FROM pg_stat_user_tables WHERE relname = 'bfm_frozen';
DROP TABLE bfm_frozen;
DROP FUNCTION bfm_error(text);
