--
-- bloom_index_parallel: CREATE INDEX (and REINDEX, CREATE INDEX
-- CONCURRENTLY) with parallel workers sets exactly the bits of a serial
-- build; bloom_index_filters gives each layer as a bloom value, byte for
-- byte what bloom_agg makes of the same keys at the layer's size.
--
-- The table's parallel_workers option asks for two workers on every
-- version (before PostgreSQL 17 the access method plans them itself, as
-- pgvector does); that the workers really run is checked by
-- test/t/019_parallel_build.pl, which reads the server log.
--
SET client_min_messages = notice;
SET maintenance_work_mem = '128MB';

CREATE TABLE bpp (k bigint, t text, d date) WITH (parallel_workers = 2, autovacuum_enabled = off);
INSERT INTO bpp SELECT hashint8(g), 'k' || g, '2000-01-01'::date + g % 5000
FROM generate_series(1, 200000) g;
INSERT INTO bpp (k) VALUES (NULL);
ANALYZE bpp;

-- the bits of each layer of an index, as bytes
CREATE FUNCTION bpp_bits(idx regclass) RETURNS bytea[] LANGUAGE sql AS $$
	SELECT array_agg(filter::bytea ORDER BY layer) FROM bloom_index_filters(idx)
$$;

-- serial and parallel builds of the same keys: bigint, text, a key with many
-- repeats, an expression, a partial index
SET max_parallel_maintenance_workers = 0;
CREATE INDEX bpp_k_s ON bpp USING bloomfilter (k);
CREATE INDEX bpp_t_s ON bpp USING bloomfilter (t);
CREATE INDEX bpp_d_s ON bpp USING bloomfilter (d);
CREATE INDEX bpp_e_s ON bpp USING bloomfilter (lower(t));
CREATE INDEX bpp_w_s ON bpp USING bloomfilter (k) WHERE k % 3 = 0;
SET max_parallel_maintenance_workers = 2;
CREATE INDEX bpp_k_p ON bpp USING bloomfilter (k);
CREATE INDEX bpp_t_p ON bpp USING bloomfilter (t);
CREATE INDEX bpp_d_p ON bpp USING bloomfilter (d);
CREATE INDEX bpp_e_p ON bpp USING bloomfilter (lower(t));
CREATE INDEX bpp_w_p ON bpp USING bloomfilter (k) WHERE k % 3 = 0;
CREATE INDEX CONCURRENTLY bpp_k_c ON bpp USING bloomfilter (k);
SELECT s AS serial, bpp_bits(s) = bpp_bits(p) AS same_bits,
	   (SELECT count(*) FROM bloom_index_filters(p)) AS layers,
	   bloom_index_verify(p) AS missing
FROM (VALUES ('bpp_k_s'::regclass, 'bpp_k_p'::regclass), ('bpp_t_s', 'bpp_t_p'),
			 ('bpp_d_s', 'bpp_d_p'), ('bpp_e_s', 'bpp_e_p'), ('bpp_w_s', 'bpp_w_p'),
			 ('bpp_k_s', 'bpp_k_c')) AS v(s, p);
-- a parallel REINDEX gives the same bits again
REINDEX INDEX bpp_k_p;
SELECT bpp_bits('bpp_k_s') = bpp_bits('bpp_k_p') AS reindexed_same_bits;

-- each layer as a bloom value: byte for byte bloom_agg of the same keys at
-- the layer's capacity and rate, and it answers as the index does
SELECT (bloom_info(filter)).design_capacity AS cap,
	   (bloom_info(filter)).design_false_positive_rate AS rate
FROM bloom_index_filters('bpp_t_p') \gset
SELECT (SELECT filter FROM bloom_index_filters('bpp_t_p'))::bytea =
	   (SELECT bloom_agg(t, :cap, :rate) FROM bpp)::bytea AS equals_bloom_agg;
SELECT count(*) FILTER (WHERE bloom_contains(f.filter, 'k' || g) <> bloom_index_contains('bpp_t_p', 'k' || g)) AS disagree,
	   count(*) FILTER (WHERE bloom_contains(f.filter, 'k' || g)) AS found
FROM bloom_index_filters('bpp_t_p') f, generate_series(199001, 201000) g;
SELECT indexrelid, layer, (bloom_info(filter)).key_family, (bloom_info(filter)).nblocks > 0 AS has_blocks
FROM bloom_index_filters('bpp_d_p');

-- a grown index gives one value per layer; together they hold every key
CREATE TABLE bpg (k int) WITH (autovacuum_enabled = off);
CREATE INDEX bpg_k ON bpg USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO bpg SELECT generate_series(1, 5000);
SELECT layer, (bloom_info(filter)).design_capacity AS capacity
FROM bloom_index_filters('bpg_k') ORDER BY layer;
SELECT count(*) FILTER (WHERE NOT EXISTS (
		SELECT 1 FROM bloom_index_filters('bpg_k') f WHERE bloom_contains(f.filter, g))) AS missing
FROM generate_series(1, 5000) g;

-- a partitioned index: the layers of every partition's index
CREATE TABLE bpq (r int, k int) PARTITION BY LIST (r);
CREATE TABLE bpq1 PARTITION OF bpq FOR VALUES IN (1);
CREATE TABLE bpq2 PARTITION OF bpq FOR VALUES IN (2);
CREATE INDEX bpq_k ON bpq USING bloomfilter (k);
SELECT indexrelid, layer FROM bloom_index_filters('bpq_k') ORDER BY 1, 2;

-- the planner expected fewer rows than the table holds (its statistics
-- say 4 rows a page, the pages now hold hundreds): one layer is not enough
-- for the keys, and the build is done again serially, in layers (which
-- keys a later layer gets depends on the order of the scan: the bits of
-- such a build are not compared)
CREATE TABLE bpu (k int, pad text) WITH (parallel_workers = 2, autovacuum_enabled = off);
INSERT INTO bpu SELECT g, repeat('x', 1900) FROM generate_series(1, 4000) g;
ANALYZE bpu;
DELETE FROM bpu;
INSERT INTO bpu SELECT g, '' FROM generate_series(1, 100000) g;
CREATE INDEX bpu_p ON bpu USING bloomfilter (k);
SELECT layers > 1 AS layered, bloom_index_verify('bpu_p') AS missing
FROM bloom_index_info('bpu_p');
SELECT count(*) FILTER (WHERE bloom_index_contains('bpu_p', g)) < 100000 * 0.01 AS rate_kept
FROM generate_series(200001, 300000) g;

-- a filter larger than maintenance_work_mem is built serially
SET maintenance_work_mem = '1MB';
CREATE INDEX bpp_big ON bpp USING bloomfilter (k) WITH (capacity = 10000000);
RESET maintenance_work_mem;
SELECT bloom_index_verify('bpp_big') AS missing;

-- bloom_index_filters is refused as reading the index is: no SELECT on the
-- table, row-level security
CREATE ROLE regress_bpp_reader;
SET ROLE regress_bpp_reader;
SELECT count(*) FROM bloom_index_filters('bpp_k_p');
RESET ROLE;
GRANT SELECT ON bpp TO regress_bpp_reader;
ALTER TABLE bpp ENABLE ROW LEVEL SECURITY;
CREATE POLICY bpp_none ON bpp USING (false);
SET ROLE regress_bpp_reader;
SELECT count(*) FROM bloom_index_filters('bpp_k_p');
RESET ROLE;
SELECT p.oid::regprocedure, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p WHERE p.proname = 'bloom_index_filters';

DROP TABLE bpp, bpg, bpq, bpu;
DROP FUNCTION bpp_bits(regclass);
DROP ROLE regress_bpp_reader;
