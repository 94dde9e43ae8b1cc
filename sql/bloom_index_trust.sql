--
-- bloom_index_trust: a bloomfilter index never answers "absent" for a key
-- some row holds, and never shows a key of a row its reader may not see.
-- Each class of false negative (partitions no index covers, invalid indexes,
-- a call site that outlives its index's storage) and of disclosure
-- (row-level security) is refused with an error, never answered.
--
SET client_min_messages = warning;

CREATE FUNCTION bft_error(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

--
-- 1. A partitioned index answers for every leaf partition, or refuses
--
CREATE TABLE pt (k int) PARTITION BY RANGE (k);
CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (100);
CREATE TABLE pt2 PARTITION OF pt FOR VALUES FROM (100) TO (200)
	PARTITION BY RANGE (k);
CREATE TABLE pt2a PARTITION OF pt2 FOR VALUES FROM (100) TO (150);
CREATE TABLE pt2b PARTITION OF pt2 FOR VALUES FROM (150) TO (200);
INSERT INTO pt SELECT generate_series(0, 199);
-- ON ONLY the parent: no partition is covered
CREATE INDEX pt_bf ON ONLY pt USING bloomfilter (k);
\set VERBOSITY default
SELECT bloom_index_contains('pt_bf', 150);
\set VERBOSITY terse
SELECT stmt, bft_error(stmt) FROM (VALUES
	('SELECT bloom_index_contains(''pt_bf'', 150)'),
	('SELECT * FROM bloom_index_partitions(''pt_bf'', 150)'),
	('SELECT bloom_index_verify(''pt_bf'')'),
	('SELECT * FROM bloom_index_info(''pt_bf'')')) AS t(stmt);
-- the first partition's index attached: the other leaves are still uncovered
CREATE INDEX pt1_bf ON pt1 USING bloomfilter (k);
ALTER INDEX pt_bf ATTACH PARTITION pt1_bf;
SELECT bft_error('SELECT bloom_index_contains(''pt_bf'', 150)') AS one_attached;
-- a sub-partitioned partition's index built ON ONLY its table: still not
CREATE INDEX pt2_bf ON ONLY pt2 USING bloomfilter (k);
ALTER INDEX pt_bf ATTACH PARTITION pt2_bf;
CREATE INDEX pt2a_bf ON pt2a USING bloomfilter (k);
ALTER INDEX pt2_bf ATTACH PARTITION pt2a_bf;
SELECT bft_error('SELECT bloom_index_contains(''pt_bf'', 175)') AS one_leaf_left;
CREATE INDEX pt2b_bf ON pt2b USING bloomfilter (k);
ALTER INDEX pt2_bf ATTACH PARTITION pt2b_bf;
-- every leaf covered: every key of every leaf found
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('pt_bf', k)) AS missed,
	   bloom_index_verify('pt_bf') AS verify_missing
FROM pt;
SELECT * FROM bloom_index_partitions('pt_bf', 175);
-- a partition attached later without an index of its own gets one (the
-- parent's index is complete); one whose index exists is covered
CREATE TABLE pt3 (k int);
INSERT INTO pt3 VALUES (250);
ALTER TABLE pt ATTACH PARTITION pt3 FOR VALUES FROM (200) TO (300);
SELECT bloom_index_contains('pt_bf', 250) AS attached_later;
-- an index on a sub-partitioned table answers for its own leaves only
SELECT bloom_index_contains('pt2_bf', 120) AS sub_tree, bloom_index_verify('pt2_bf') AS missing;
-- a foreign table partition can have no index: refused, naming it
CREATE FOREIGN DATA WRAPPER bft_fdw;
CREATE SERVER bft_server FOREIGN DATA WRAPPER bft_fdw;
CREATE FOREIGN TABLE pt4 PARTITION OF pt FOR VALUES FROM (300) TO (400) SERVER bft_server;
\set VERBOSITY default
SELECT bloom_index_contains('pt_bf', 350);
\set VERBOSITY terse
DROP FOREIGN TABLE pt4;
SELECT bloom_index_contains('pt_bf', 150) AS foreign_gone;
-- a partitioned table with no partition holds no key
CREATE TABLE pt_empty (k int) PARTITION BY LIST (k);
CREATE INDEX pt_empty_bf ON pt_empty USING bloomfilter (k);
SELECT bloom_index_contains('pt_empty_bf', 1) AS no_partitions,
	   bloom_index_verify('pt_empty_bf') AS missing;

--
-- 2. An invalid index is refused, never probed
--
CREATE TABLE inv (k int);
INSERT INTO inv SELECT generate_series(1, 100);
-- a CREATE INDEX CONCURRENTLY that fails in its build leaves an index with
-- no pages; one that fails later (here marked so by hand, as a cancel in
-- its last phase does) has pages that may miss rows: both are refused
CREATE INDEX CONCURRENTLY inv_bad ON inv USING bloomfilter ((100 / (k - 50)));
SELECT indisvalid FROM pg_index WHERE indexrelid = 'inv_bad'::regclass;
\set VERBOSITY default
SELECT bloom_index_contains('inv_bad', 1);
\set VERBOSITY terse
CREATE INDEX inv_bf ON inv USING bloomfilter (k);
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'inv_bf'::regclass;
SELECT stmt, bft_error(stmt) FROM (VALUES
	('SELECT bloom_index_contains(''inv_bf'', 1)'),
	('SELECT * FROM bloom_index_partitions(''inv_bf'', 1)'),
	('SELECT bloom_index_verify(''inv_bf'')'),
	('SELECT * FROM bloom_index_info(''inv_bf'')')) AS t(stmt);
REINDEX INDEX inv_bf;
SELECT bloom_index_contains('inv_bf', 1) AS after_reindex;
-- an invalid leaf under a partitioned index
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'pt1_bf'::regclass;
SELECT bft_error('SELECT bloom_index_contains(''pt_bf'', 5)') AS invalid_leaf;
REINDEX INDEX pt1_bf;
SELECT bloom_index_contains('pt_bf', 5) AS leaf_rebuilt;

--
-- 3. A call site goes back to the catalog when its own transaction gives
--    the index new storage (REINDEX, TRUNCATE, a rewrite)
--
CREATE TABLE rx (k int);
CREATE INDEX rx_bf ON rx USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO rx SELECT 0 FROM generate_series(1, 3000);
INSERT INTO rx VALUES (999999);
CREATE TABLE probes (ord int, k int);
INSERT INTO probes SELECT g, 999999 FROM generate_series(1, 6) g;
BEGIN;
DECLARE cur CURSOR FOR SELECT ord, bloom_index_contains('rx_bf', k) FROM probes;
FETCH 1 FROM cur;
REINDEX INDEX rx_bf;
FETCH 2 FROM cur;
-- a rewrite of the table gives the index new storage too
ALTER TABLE rx ADD COLUMN r int DEFAULT (random() * 10)::int;
FETCH 1 FROM cur;
COMMIT;
-- TRUNCATE in the same transaction: the key is gone, and so is its answer
BEGIN;
DECLARE cur2 CURSOR FOR SELECT ord, bloom_index_contains('rx_bf', k) FROM probes;
FETCH 1 FROM cur2;
TRUNCATE rx;
INSERT INTO rx VALUES (1);
FETCH 1 FROM cur2;
ROLLBACK;
-- a function that rebuilds the index inside the probing statement: the
-- statement's later rows are probed in the rebuilt index (here one of a
-- single layer instead of the grown one of several, whose pages are gone)
CREATE TABLE rg (k int);
CREATE INDEX rg_bf ON rg USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO rg SELECT g FROM generate_series(1, 20000) g;
SELECT layers > 1 AS grown FROM bloom_index_info('rg_bf');
CREATE FUNCTION rg_rebuild(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
	IF n = 3 THEN
		EXECUTE 'ALTER INDEX rg_bf RESET (capacity)';
		EXECUTE 'REINDEX INDEX rg_bf';
	END IF;
	RETURN n;
END $$;
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('rg_bf', rg_rebuild(g))) AS missed
FROM generate_series(1, 20000) g;
SELECT layers FROM bloom_index_info('rg_bf');

--
-- 4. Row-level security: an index over every row is read only by those who
--    may read every row (the owner, superusers, BYPASSRLS roles)
--
CREATE TABLE secrets (owner text, ssn int);
INSERT INTO secrets VALUES ('regress_bft_sales', 111), ('regress_bft_hr', 222);
ALTER TABLE secrets ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON secrets USING (owner = current_user);
CREATE ROLE regress_bft_sales;
CREATE ROLE regress_bft_bypass BYPASSRLS;
GRANT SELECT ON secrets TO regress_bft_sales, regress_bft_bypass;
CREATE INDEX secrets_bf ON secrets USING bloomfilter (ssn);
SET ROLE regress_bft_sales;
SELECT count(*) AS visible_222 FROM secrets WHERE ssn = 222;
SELECT stmt, bft_error(stmt) FROM (VALUES
	('SELECT bloom_index_contains(''secrets_bf'', 222)'),
	('SELECT * FROM bloom_index_partitions(''secrets_bf'', 222)'),
	('SELECT * FROM bloom_index_info(''secrets_bf'')'),
	('SELECT bloom_index_verify(''secrets_bf'')')) AS t(stmt);
\set VERBOSITY default
SELECT bloom_index_contains('secrets_bf', 222);
\set VERBOSITY terse
RESET ROLE;
SET ROLE regress_bft_bypass;
SELECT bloom_index_contains('secrets_bf', 222) AS bypass_reads;
RESET ROLE;
-- the owner reads it (policies do not apply to the owner unless forced)
CREATE ROLE regress_bft_owner;
ALTER TABLE secrets OWNER TO regress_bft_owner;
SET ROLE regress_bft_owner;
SELECT bloom_index_contains('secrets_bf', 222) AS owner_reads;
-- FORCE ROW LEVEL SECURITY applies the policies to the owner too
ALTER TABLE secrets FORCE ROW LEVEL SECURITY;
SELECT bft_error('SELECT bloom_index_contains(''secrets_bf'', 222)') AS forced_owner;
ALTER TABLE secrets NO FORCE ROW LEVEL SECURITY;
-- a SECURITY DEFINER function of the owner reads it for its caller, as any
-- query it runs would (the definer's rights, as PostgreSQL's own)
RESET ROLE;
CREATE FUNCTION secrets_probe(k int) RETURNS boolean LANGUAGE sql SECURITY DEFINER
	AS $$ SELECT bloom_index_contains('secrets_bf', k) $$;
ALTER FUNCTION secrets_probe(int) OWNER TO regress_bft_owner;
GRANT EXECUTE ON FUNCTION secrets_probe(int) TO regress_bft_sales;
SET ROLE regress_bft_sales;
SELECT secrets_probe(222) AS definer_reads;
RESET ROLE;
-- a call site that has read the index does not keep its answer across a
-- SET ROLE inside a function: the second probe is refused
CREATE FUNCTION secrets_twice() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text := '';
BEGIN
	FOR i IN 1..2 LOOP
		IF i = 2 THEN
			SET LOCAL ROLE regress_bft_sales;
		END IF;
		BEGIN
			r := r || bloom_index_contains('secrets_bf', 222)::text || ' ';
		EXCEPTION WHEN insufficient_privilege THEN
			r := r || 'refused ';
		END;
	END LOOP;
	RETURN r;
END $$;
BEGIN;
SELECT secrets_twice() AS answers;
ROLLBACK;

--
-- 5. A rate no key fits is refused at CREATE INDEX (empty table or not)
--    and at ALTER INDEX ... SET
--
SELECT stmt, bft_error(stmt) FROM (VALUES
	('CREATE INDEX ON inv USING bloomfilter (k) WITH (false_positive_rate = 1e-50)'),
	('CREATE INDEX ON rg USING bloomfilter (k) WITH (false_positive_rate = 1e-50)'),
	('CREATE INDEX ON probes USING bloomfilter (k) WITH (false_positive_rate = 1e-50)'),
	('ALTER INDEX inv_bf SET (false_positive_rate = 1e-50)')) AS t(stmt);
\set VERBOSITY default
CREATE INDEX ON inv USING bloomfilter (k) WITH (false_positive_rate = 1e-50);
\set VERBOSITY terse
-- a small rate that a key fits is built, and takes inserts
CREATE INDEX inv_tight ON inv USING bloomfilter (k) WITH (false_positive_rate = 1e-20);
INSERT INTO inv VALUES (1000);
SELECT bloom_index_contains('inv_tight', 1000) AS tight, bloom_index_verify('inv_tight') AS missing;

DROP TABLE pt, pt_empty, inv, rx, probes, rg, secrets;
DROP FUNCTION bft_error(text), rg_rebuild(int), secrets_twice(), secrets_probe(int);
DROP SERVER bft_server;
DROP FOREIGN DATA WRAPPER bft_fdw;
DROP ROLE regress_bft_sales, regress_bft_bypass, regress_bft_owner;
