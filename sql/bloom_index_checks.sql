--
-- bloom_index_checks: the checks of the bloomfilter index that the other
-- tests meet only when all is well.  bloom_index_verify counts exactly the
-- rows whose key an index misses; the operator class validator refuses an
-- operator class with operators, support functions or a storage type; a
-- call site of bloom_index_contains checks the user again after SET ROLE.
-- (Corrupted pages: test/t/021_index_corruption.pl.)
--
SET client_min_messages = warning;

CREATE FUNCTION bfc_error(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

--
-- 1. bloom_index_verify counts the live rows whose key the index misses.
--    An expression index over an IMMUTABLE function that is then replaced
--    by one giving other values (which PostgreSQL lets a user do, and
--    documents as breaking the index) misses the keys that changed:
--    bloom_index_verify computes each row's key anew, as the new function
--    gives it, and counts them, per row (repeated keys counted each time,
--    NULL keys never), summed over the partitions
--
CREATE FUNCTION bfc_key(k int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	RETURN k;
END $$;
CREATE TABLE bfv (k int) PARTITION BY RANGE (k);
CREATE TABLE bfv1 PARTITION OF bfv FOR VALUES FROM (MINVALUE) TO (401)
	WITH (autovacuum_enabled = off);
CREATE TABLE bfv2 PARTITION OF bfv FOR VALUES FROM (401) TO (MAXVALUE)
	WITH (autovacuum_enabled = off);
-- every key twice
INSERT INTO bfv SELECT g FROM generate_series(1, 1000) g, generate_series(1, 2);
CREATE INDEX bfv_k ON bfv USING bloomfilter (bfc_key(k))
	WITH (false_positive_rate = 1e-6);
SELECT bloom_index_verify('bfv_k') AS missing_before;
-- multiples of 10 now give NULL (no key), other multiples of 3 another key:
-- 300 keys changed, 600 rows (240 in bfv1, which holds 1 to 400)
CREATE OR REPLACE FUNCTION bfc_key(k int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
	RETURN CASE WHEN k % 10 = 0 THEN NULL WHEN k % 3 = 0 THEN k + 1000000 ELSE k END;
END $$;
SELECT bloom_index_verify('bfv_k') AS missing;
SELECT c.relname AS partition, bloom_index_verify(i.indexrelid) AS missing
FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
WHERE i.indrelid IN ('bfv1'::regclass, 'bfv2'::regclass) ORDER BY 1;
-- the same rows that probes of the new keys miss
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('bfv_k', bfc_key(k))) AS probes_missed,
	   count(*) FILTER (WHERE bfc_key(k) IS NULL) AS null_keys
FROM bfv;
-- deleted rows no longer count: 30 of the changed keys lie in 901 to 1000
DELETE FROM bfv WHERE k > 900;
SELECT bloom_index_verify('bfv_k') AS missing_after_delete;
-- rows deleted by the transaction that verifies do not count either (30
-- changed keys in 1 to 100); a row it inserts is indexed with the key the
-- new function gives, and found
BEGIN;
DELETE FROM bfv WHERE k <= 100;
INSERT INTO bfv VALUES (3003);
SELECT bloom_index_verify('bfv_k') AS missing_in_xact;
ROLLBACK;
-- REINDEX computes the keys anew
REINDEX INDEX bfv_k;
SELECT bloom_index_verify('bfv_k') AS missing_after_reindex;
DROP TABLE bfv;
DROP FUNCTION bfc_key(int);

--
-- 2. The operator class validator (amvalidate): a bloomfilter operator class
--    has no operators, no support functions and no storage type (the access
--    method hashes keys itself); one that has any is invalid, each said in
--    an INFO message.  CREATE OPERATOR CLASS takes operators of any number
--    (the access method declares no strategies), but refuses support
--    functions (it declares none) and a storage type other than the column's
--    (it has no storage): only catalog edits make those
--
CREATE OPERATOR CLASS bfc_with_operator FOR TYPE int4 USING bloomfilter AS
	OPERATOR 1 = (int4, int4);
SELECT bfc_error('CREATE OPERATOR CLASS bfc_with_function FOR TYPE int4 USING bloomfilter AS FUNCTION 1 hashint4(int4)');
SELECT bfc_error('CREATE OPERATOR CLASS bfc_with_storage FOR TYPE int4 USING bloomfilter AS STORAGE int8');
CREATE OPERATOR CLASS bfc_with_function FOR TYPE int4 USING bloomfilter AS
	STORAGE int4;
CREATE OPERATOR CLASS bfc_with_storage FOR TYPE int4 USING bloomfilter AS
	STORAGE int4;
CREATE OPERATOR CLASS bfc_with_all FOR TYPE text USING bloomfilter AS
	OPERATOR 1 = (text, text);
-- so far only the operators make a class invalid
SELECT opcname, amvalidate(oid) FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomfilter')
ORDER BY opcname COLLATE "C";
INSERT INTO pg_amproc (oid, amprocfamily, amproclefttype, amprocrighttype, amprocnum, amproc)
SELECT (SELECT max(oid)::int8 FROM pg_amproc) + n, c.opcfamily, c.opcintype, c.opcintype, 1, p
FROM (VALUES ('bfc_with_function', 1, 'hashint4'::regproc),
			 ('bfc_with_all', 2, 'hashtext'::regproc)) AS v(name, n, p)
	 JOIN pg_opclass c ON c.opcname = v.name;
UPDATE pg_opclass SET opckeytype = 'int8'::regtype WHERE opcname = 'bfc_with_storage';
UPDATE pg_opclass SET opckeytype = 'name'::regtype WHERE opcname = 'bfc_with_all';
SELECT opcname, amvalidate(oid) FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomfilter')
ORDER BY opcname COLLATE "C";
DELETE FROM pg_amproc WHERE amprocfamily IN
	(SELECT opcfamily FROM pg_opclass WHERE opcname LIKE 'bfc\_%');
DROP OPERATOR FAMILY bfc_with_operator USING bloomfilter;
DROP OPERATOR FAMILY bfc_with_function USING bloomfilter;
DROP OPERATOR FAMILY bfc_with_storage USING bloomfilter;
DROP OPERATOR FAMILY bfc_with_all USING bloomfilter;

--
-- 3. A call site of bloom_index_contains keeps its privilege checks for one
--    user: after SET ROLE to a role that may not read the table, the next
--    probe from the same call site (a PL/pgSQL expression keeps its state
--    for the transaction; no subtransaction in between, which would make
--    the call site check again anyway) is refused, not answered
--
CREATE TABLE bfc (k int);
INSERT INTO bfc SELECT g FROM generate_series(1, 100) g;
CREATE INDEX bfc_k ON bfc USING bloomfilter (k);
CREATE ROLE regress_bfc_nosel;
CREATE FUNCTION bfc_probe_twice() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	r text := '';
BEGIN
	FOR i IN 1..2 LOOP
		IF i = 2 THEN
			SET LOCAL ROLE regress_bfc_nosel;
		END IF;
		r := r || bloom_index_contains('bfc_k', 7)::text || ' ';
		RAISE INFO 'probe %: %', i, r;
	END LOOP;
	RETURN r;
END $$;
\set VERBOSITY terse
BEGIN;
SELECT bfc_probe_twice() AS answers;
ROLLBACK;
\set VERBOSITY default

DROP TABLE bfc;
DROP FUNCTION bfc_probe_twice(), bfc_error(text);
DROP ROLE regress_bfc_nosel;
