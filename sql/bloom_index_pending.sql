--
-- bloom_index_pending: the keys a transaction inserts into a bloomfilter
-- index wait in its backend, as hashes, until they are set in batches
-- (bfinsert.c).  Every probe, in any process, must find every key of every
-- row its snapshot sees, and nothing run in between may lose them.
--

--
-- Parallel workers probing from a statement's AFTER trigger.  The trigger
-- runs while the keys the statement inserted wait in the backend until the
-- commit; a parallel worker has none of them in its own memory (they are
-- set before a query that starts workers).  With the leader kept out of the scan, every probe is a
-- worker's.  (The query is run by EXECUTE: a PL/pgSQL SELECT INTO asks for
-- at most two rows, and such a query runs without workers.)
--
CREATE TABLE bpt (k int) WITH (autovacuum_enabled = off);
CREATE INDEX bpt_k ON bpt USING bloomfilter (k) WITH (capacity = 100000);
CREATE TABLE bpt_missed (stmt int, missed bigint);
CREATE FUNCTION bpt_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	n bigint;
BEGIN
	EXECUTE $q$SELECT count(*) FROM bpt WHERE NOT bloom_index_contains('bpt_k', k)$q$
		INTO n;
	INSERT INTO bpt_missed SELECT coalesce(max(stmt), 0) + 1, n FROM bpt_missed;
	RETURN NULL;
END $$;
CREATE TRIGGER bpt_after AFTER INSERT ON bpt
	FOR EACH STATEMENT EXECUTE FUNCTION bpt_check();
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
-- the probe runs in workers: a Gather over the table
EXPLAIN (COSTS OFF)
SELECT count(*) FROM bpt WHERE NOT bloom_index_contains('bpt_k', k);
INSERT INTO bpt SELECT g FROM generate_series(1, 20000) g;
BEGIN;
INSERT INTO bpt SELECT g FROM generate_series(20001, 50000) g;
INSERT INTO bpt SELECT g FROM generate_series(50001, 60000) g;
COMMIT;
COPY bpt FROM PROGRAM 'seq 60001 70000';
-- every statement's trigger found every key of its rows
SELECT stmt, missed FROM bpt_missed ORDER BY stmt;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
SELECT bloom_index_verify('bpt_k') AS missing;
DROP TABLE bpt, bpt_missed;
DROP FUNCTION bpt_check();

--
-- DDL after inserts in the same transaction.  ALTER COLUMN ... TYPE without
-- a rewrite keeps the index's file under a new index OID; REINDEX,
-- TRUNCATE, SET UNLOGGED / LOGGED and CLUSTER give it new storage.  The
-- transaction's keys must be in the index after the commit, whatever came
-- between the inserts and the commit.
--
CREATE TABLE bpd (k varchar(10), b bigint) WITH (autovacuum_enabled = off);
CREATE INDEX bpd_k ON bpd USING bloomfilter (k);
CREATE INDEX bpd_b ON bpd USING bloomfilter (b);
CREATE INDEX bpd_bt ON bpd (b);
BEGIN;
INSERT INTO bpd SELECT g::text, g FROM generate_series(1, 1000) g;
ALTER TABLE bpd ALTER COLUMN k TYPE varchar(20);
COMMIT;
-- the index was rebuilt on its old file, under a new OID
SELECT bloom_index_verify('bpd_k') AS missing_k, bloom_index_verify('bpd_b') AS missing_b;
BEGIN;
INSERT INTO bpd SELECT g::text, g FROM generate_series(1001, 2000) g;
ALTER TABLE bpd ALTER COLUMN b TYPE bigint;
COMMIT;
SELECT bloom_index_verify('bpd_k') AS missing_k, bloom_index_verify('bpd_b') AS missing_b;
-- in a function, and with a savepoint rolled back in between
CREATE FUNCTION bpd_load(lo int, hi int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO bpd SELECT g::text, g FROM generate_series(lo, hi) g;
	ALTER TABLE bpd ALTER COLUMN k TYPE varchar(30);
END $$;
BEGIN;
SELECT bpd_load(2001, 3000);
SAVEPOINT s;
INSERT INTO bpd VALUES ('x', -1);
ROLLBACK TO SAVEPOINT s;
ALTER TABLE bpd ALTER COLUMN b TYPE bigint;
COMMIT;
SELECT count(*) AS rows, bloom_index_verify('bpd_k') AS missing_k,
	   bloom_index_verify('bpd_b') AS missing_b FROM bpd;
-- every other DDL of the same transaction, one after the other
BEGIN;
INSERT INTO bpd SELECT g::text, g FROM generate_series(3001, 4000) g;
REINDEX INDEX bpd_k;
INSERT INTO bpd SELECT g::text, g FROM generate_series(4001, 5000) g;
ALTER TABLE bpd SET UNLOGGED;
INSERT INTO bpd SELECT g::text, g FROM generate_series(5001, 6000) g;
ALTER TABLE bpd SET LOGGED;
INSERT INTO bpd SELECT g::text, g FROM generate_series(6001, 7000) g;
CLUSTER bpd USING bpd_bt;
COMMIT;
SELECT count(*) AS rows, bloom_index_verify('bpd_k') AS missing_k,
	   bloom_index_verify('bpd_b') AS missing_b FROM bpd;
BEGIN;
INSERT INTO bpd SELECT g::text, g FROM generate_series(7001, 8000) g;
TRUNCATE bpd;
INSERT INTO bpd SELECT g::text, g FROM generate_series(8001, 9000) g;
COMMIT;
SELECT count(*) AS rows, bloom_index_verify('bpd_k') AS missing_k,
	   bloom_index_verify('bpd_b') AS missing_b FROM bpd;
DROP TABLE bpd;
DROP FUNCTION bpd_load(int, int);
