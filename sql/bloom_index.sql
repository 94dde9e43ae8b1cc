-- bloomfilter index access method: CREATE INDEX ... USING bloomfilter,
-- bloom_index_contains, bloom_index_partitions, bloom_index_info,
-- bloom_index_verify
SET client_min_messages = warning;

-- the access method, its one operator class, and amvalidate accepting it
SELECT amname, amtype FROM pg_am WHERE amname = 'bloomfilter';
SELECT opcname, opcintype::regtype, opcdefault FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomfilter');
SELECT amvalidate(oid) FROM pg_opclass
WHERE opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomfilter');

CREATE TABLE bfi (id int, name text, v varchar, c char(5), d numeric,
				  u uuid, ts timestamptz, b bytea, f float8, big bigint);
INSERT INTO bfi
SELECT g, 'n' || g, 'v' || g, 'c' || (g % 100), g / 10.0,
	   md5(g::text)::uuid, '2024-01-01'::timestamptz + g * interval '1 minute',
	   int4send(g), g * 0.5, g::bigint * 1000000000
FROM generate_series(1, 5000) g;

CREATE INDEX bfi_id ON bfi USING bloomfilter (id);
CREATE INDEX bfi_name ON bfi USING bloomfilter (name) WITH (false_positive_rate = 0.001);
CREATE INDEX bfi_v ON bfi USING bloomfilter (v);
CREATE INDEX bfi_c ON bfi USING bloomfilter (c);
CREATE INDEX bfi_d ON bfi USING bloomfilter (d);
CREATE INDEX bfi_u ON bfi USING bloomfilter (u);
CREATE INDEX bfi_ts ON bfi USING bloomfilter (ts);
CREATE INDEX bfi_b ON bfi USING bloomfilter (b);
CREATE INDEX bfi_f ON bfi USING bloomfilter (f);
CREATE INDEX bfi_big ON bfi USING bloomfilter (big) WITH (capacity = 100000);
CREATE INDEX bfi_lower ON bfi USING bloomfilter (lower(name));
CREATE INDEX bfi_part ON bfi USING bloomfilter (id) WHERE id % 2 = 0;

-- every key of the table is found, for every index
SELECT indexrelid::regclass AS index, bloom_index_verify(indexrelid) AS missing
FROM pg_index WHERE indrelid = 'bfi'::regclass ORDER BY indexrelid;

-- the quoted name works without a cast; integers are one family, as in bloom
SELECT bloom_index_contains('bfi_id', 42) AS int4,
	   bloom_index_contains('bfi_id', 42::smallint) AS int2,
	   bloom_index_contains('bfi_id', 42::bigint) AS int8,
	   bloom_index_contains('bfi_big', 42000000000) AS big;
-- same canonical bytes as the bloom type: varchar and text, char(n) blanks,
-- numeric scale, float -0
SELECT bloom_index_contains('bfi_name', 'n7'::text) AS text,
	   bloom_index_contains('bfi_v', 'v7'::text) AS varchar_as_text,
	   bloom_index_contains('bfi_c', 'c7   '::char(5)) AS bpchar,
	   bloom_index_contains('bfi_c', 'c7'::text) AS bpchar_as_text,
	   bloom_index_contains('bfi_d', 0.70) AS numeric,
	   bloom_index_contains('bfi_d', 0.7000) AS numeric_scale,
	   bloom_index_contains('bfi_u', md5('7')::uuid) AS uuid,
	   bloom_index_contains('bfi_b', int4send(7)) AS bytea,
	   bloom_index_contains('bfi_lower', 'n7'::text) AS expression;
-- one layout: a one-layer index answers exactly as a bloom value of the same
-- keys and size (its first layer takes 3/4 of the rate), false positives too
CREATE INDEX bfi_same ON bfi USING bloomfilter (id) WITH (capacity = 10000);
SELECT count(*) FILTER (WHERE bloom_index_contains('bfi_same', g) <> bloom_contains(s.f, g)) AS disagree,
	   count(*) FILTER (WHERE bloom_index_contains('bfi_same', g)) > 5000 AS has_false_positives
FROM generate_series(1, 20000) g,
	 (SELECT bloom_agg(id, 10000, 0.0075) AS f FROM bfi) s;
DROP INDEX bfi_same;
-- the false-positive rate keeps its promise over absent keys
SELECT count(*) FILTER (WHERE bloom_index_contains('bfi_id', g)) < 100000 * 0.01 AS id_rate_ok,
	   count(*) FILTER (WHERE bloom_index_contains('bfi_name', 'n' || g)) < 100000 * 0.001 AS name_rate_ok
FROM generate_series(100001, 200000) g;
-- a partial index holds only its rows' keys (odd ids are absent but may be
-- false positives: count them)
SELECT count(*) FILTER (WHERE bloom_index_contains('bfi_part', g)) = 2500 AS evens_found,
	   count(*) FILTER (WHERE bloom_index_contains('bfi_part', g + 1)) < 2500 * 0.05 AS odds_mostly_absent
FROM generate_series(2, 5000, 2) g;

-- NULL keys: not indexed, and a NULL probe is NULL
INSERT INTO bfi (id) VALUES (NULL);
SELECT bloom_index_contains('bfi_id', NULL::int) IS NULL AS null_probe,
	   bloom_index_contains(NULL, 1) IS NULL AS null_index;

-- inserts are found at once, in the same transaction too
BEGIN;
INSERT INTO bfi (id, name) VALUES (7777777, 'fresh');
SELECT bloom_index_contains('bfi_id', 7777777) AS in_xact,
	   bloom_index_contains('bfi_name', 'fresh'::text) AS name_in_xact;
ROLLBACK;
-- a rolled-back insert may leave its bits: an extra false positive, never a
-- lost key; verify counts live rows only
SELECT bloom_index_verify('bfi_id') AS missing;
COPY bfi (id, name) FROM stdin;
6000001	copied1
6000002	copied2
\.
SELECT bloom_index_contains('bfi_id', 6000002) AS copied;
UPDATE bfi SET id = id + 1000000 WHERE id <= 10;
SELECT bloom_index_contains('bfi_id', 1000005) AS updated,
	   bloom_index_verify('bfi_id') AS missing;
DELETE FROM bfi WHERE id > 1000000 AND id < 1000011;
VACUUM bfi;
SELECT bloom_index_verify('bfi_id') AS missing_after_vacuum;

-- growth: a small capacity grows by layers, each larger and tighter, and the
-- rate stays within the promise
CREATE TABLE bfg (k int);
CREATE INDEX bfg_k ON bfg USING bloomfilter (k) WITH (capacity = 1000, false_positive_rate = 0.01);
SELECT capacity, false_positive_rate, layers, estimated_keys, size_bytes
FROM bloom_index_info('bfg_k');
INSERT INTO bfg SELECT g FROM generate_series(1, 20000) g;
SELECT layers, layers > 1 AS grew, size_bytes > 8192 * 2 AS bigger,
	   estimated_keys BETWEEN 19000 AND 21000 AS keys_ok,
	   expected_rate <= 0.01 AS expected_ok
FROM bloom_index_info('bfg_k');
SELECT bloom_index_verify('bfg_k') AS missing;
SELECT count(*) FILTER (WHERE bloom_index_contains('bfg_k', g)) < 100000 * 0.01 AS rate_ok
FROM generate_series(100001, 200000) g;
-- an insert of keys already present writes no index WAL: as much WAL as the
-- same rows into a table without the index; new keys write some
CREATE TABLE bfw (k int);
SELECT pg_current_wal_insert_lsn() AS lsn0 \gset
INSERT INTO bfw SELECT g FROM generate_series(1, 1000) g;
SELECT pg_current_wal_insert_lsn() AS lsn1 \gset
INSERT INTO bfg SELECT g FROM generate_series(1, 1000) g;
SELECT pg_current_wal_insert_lsn() AS lsn2 \gset
INSERT INTO bfg SELECT g FROM generate_series(300001, 301000) g;
SELECT pg_current_wal_insert_lsn() AS lsn3 \gset
SELECT pg_wal_lsn_diff(:'lsn2', :'lsn1') < pg_wal_lsn_diff(:'lsn1', :'lsn0') * 1.05 AS present_keys_no_index_wal,
	   pg_wal_lsn_diff(:'lsn3', :'lsn2') > pg_wal_lsn_diff(:'lsn1', :'lsn0') + 1000 * 20 AS new_keys_index_wal;
DROP TABLE bfw;
TRUNCATE bfg;
INSERT INTO bfg SELECT g FROM generate_series(1, 1000) g;
-- TRUNCATE gives an empty index, built again
SELECT bloom_index_verify('bfg_k') AS missing, layers FROM bloom_index_info('bfg_k');
-- REINDEX rebuilds it at the table's size
REINDEX INDEX bfg_k;
SELECT bloom_index_verify('bfg_k') AS missing, layers FROM bloom_index_info('bfg_k');

-- default capacity: twice the table's rows at build, at least 1000
CREATE TABLE bfe (k int);
CREATE INDEX bfe_k ON bfe USING bloomfilter (k);
SELECT capacity >= 1000 AS min_capacity, layers, estimated_keys FROM bloom_index_info('bfe_k');
SELECT bloom_index_contains('bfe_k', 1) AS empty;
INSERT INTO bfg SELECT g FROM generate_series(1, 50000) g;
ANALYZE bfg;
CREATE INDEX bfg_k2 ON bfg USING bloomfilter (k);
SELECT capacity, layers FROM bloom_index_info('bfg_k2');

-- CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY
CREATE INDEX CONCURRENTLY bfg_k3 ON bfg USING bloomfilter (k);
REINDEX INDEX CONCURRENTLY bfg_k3;
SELECT bloom_index_verify('bfg_k3') AS missing;

-- unlogged tables
CREATE UNLOGGED TABLE bfu (k text);
CREATE INDEX bfu_k ON bfu USING bloomfilter (k);
INSERT INTO bfu VALUES ('a'), ('b');
SELECT bloom_index_contains('bfu_k', 'a'::text) AS a, bloom_index_verify('bfu_k') AS missing;

-- partitioned tables: the parent's index answers for all partitions
CREATE TABLE bfp (region int, k int) PARTITION BY LIST (region);
CREATE TABLE bfp1 PARTITION OF bfp FOR VALUES IN (1);
CREATE TABLE bfp2 PARTITION OF bfp FOR VALUES IN (2);
CREATE TABLE bfp3 PARTITION OF bfp FOR VALUES IN (3);
CREATE INDEX bfp_k ON bfp USING bloomfilter (k) WITH (false_positive_rate = 0.0001);
INSERT INTO bfp SELECT 1, g FROM generate_series(1, 1000) g;
INSERT INTO bfp SELECT 2, g FROM generate_series(1001, 2000) g;
SELECT bloom_index_contains('bfp_k', 5) AS in_p1,
	   bloom_index_contains('bfp_k', 1500) AS in_p2,
	   bloom_index_contains('bfp_k', 999999) AS nowhere;
SELECT * FROM bloom_index_partitions('bfp_k', 1500);
SELECT * FROM bloom_index_partitions('bfp_k', 5);
SELECT count(*) AS nowhere FROM bloom_index_partitions('bfp_k', 999999);
SELECT indexrelid, layers FROM bloom_index_info('bfp_k') ORDER BY 1;
SELECT bloom_index_verify('bfp_k') AS missing;
-- a partition's index works alone too
SELECT bloom_index_contains('bfp2_k_idx', 1500) AS leaf;

-- the planner never uses it
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM bfg WHERE k = 42;
RESET enable_seqscan;

-- errors
SELECT bloom_index_contains('bfi_id', 'x'::text);
SELECT bloom_index_contains('bfi_name', 42);
SELECT bloom_index_contains('bfi', 1);
CREATE INDEX bfi_btree ON bfi (id);
SELECT bloom_index_contains('bfi_btree', 1);
SELECT bloom_index_verify('bfi_btree');
SELECT bloom_index_contains(0::oid::regclass, 1);
CREATE INDEX ON bfi USING bloomfilter (id, name);
CREATE INDEX ON bfi USING bloomfilter (point(id, id));
CREATE INDEX ON bfi USING bloomfilter (id) WITH (false_positive_rate = 1);
CREATE INDEX ON bfi USING bloomfilter (id) WITH (false_positive_rate = 0);
CREATE INDEX ON bfi USING bloomfilter (id) WITH (capacity = 0);
CREATE INDEX ON bfi USING bloomfilter (id) WITH (capacity = 500000000, false_positive_rate = 0.000001);
CREATE INDEX ON bfi USING bloomfilter (id) WITH (bogus = 1);
CREATE UNIQUE INDEX ON bfi USING bloomfilter (id);
-- another role must be able to read the table
CREATE ROLE bfi_reader;
SET ROLE bfi_reader;
SELECT bloom_index_contains('bfi_id', 1);
RESET ROLE;
GRANT SELECT ON bfi TO bfi_reader;
SET ROLE bfi_reader;
SELECT bloom_index_contains('bfi_id', 1);
RESET ROLE;
DROP OWNED BY bfi_reader;
DROP ROLE bfi_reader;

DROP TABLE bfi, bfg, bfe, bfu, bfp;
