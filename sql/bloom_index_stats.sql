--
-- bloom_index_stats: a bloomfilter index's use counts in pg_stat_user_indexes
-- (idx_scan, and last_idx_scan on 16 and later) as an index scan's does, so
-- that the usual "unused indexes" query keeps it.  bloom_index_contains
-- counts one scan of each leaf index per call site and snapshot (once per
-- statement), bloom_index_partitions one per call and leaf, the join
-- pre-check one per execution and leaf.
--
SET max_parallel_workers_per_gather = 0;
CREATE TABLE st_t (k int);
INSERT INTO st_t SELECT g * 2 FROM generate_series(1, 1000) g;
CREATE INDEX st_t_k ON st_t (k);
CREATE INDEX st_t_bf ON st_t USING bloomfilter (k);
CREATE TABLE st_p (k int) PARTITION BY RANGE (k);
CREATE TABLE st_p1 PARTITION OF st_p FOR VALUES FROM (0) TO (1000);
CREATE TABLE st_p2 PARTITION OF st_p FOR VALUES FROM (1000) TO (MAXVALUE);
INSERT INTO st_p SELECT g * 2 FROM generate_series(1, 1000) g;
CREATE INDEX st_p_k ON st_p (k);
CREATE INDEX st_p_bf ON st_p USING bloomfilter (k);
CREATE TABLE st_in (k int);
INSERT INTO st_in SELECT g * 2 + 1 FROM generate_series(1, 2000) g;
VACUUM ANALYZE st_t;
VACUUM ANALYZE st_p;
VACUUM ANALYZE st_in;

-- the bloomfilter indexes' scans so far, and whether last_idx_scan (16 and
-- later) is set wherever idx_scan is not 0
CREATE FUNCTION st_scans(OUT tab text, OUT idx_scan bigint, OUT last_set bool)
RETURNS SETOF record LANGUAGE sql AS $$
    SELECT s.relname::text, s.idx_scan,
           NOT (to_jsonb(s) ? 'last_idx_scan') OR
           (to_jsonb(s) ->> 'last_idx_scan' IS NOT NULL) = (s.idx_scan > 0)
    FROM pg_stat_user_indexes s JOIN pg_index i ON i.indexrelid = s.indexrelid
    JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
    WHERE a.amname = 'bloomfilter' AND s.relname LIKE 'st\_%'
    ORDER BY 1
$$;
SELECT pg_stat_force_next_flush();
SELECT * FROM st_scans();

-- one call site, one statement: one scan, however many rows it probes
SELECT count(*) FROM generate_series(1, 100) g WHERE bloom_index_contains('st_t_bf', g);
SELECT bloom_index_contains('st_t_bf', 4);
-- under a partitioned index, each leaf
SELECT bloom_index_contains('st_p_bf', 4);
SELECT bloom_index_partitions('st_p_bf', 4);
SELECT pg_stat_force_next_flush();
SELECT * FROM st_scans();

-- the join pre-check: one scan of each leaf per execution
SELECT count(*) FROM st_in i WHERE NOT EXISTS (SELECT 1 FROM st_t t WHERE t.k = i.k);
SELECT count(*) FROM st_in i WHERE EXISTS (SELECT 1 FROM st_p p WHERE p.k = i.k);
SELECT pg_stat_force_next_flush();
SELECT * FROM st_scans();
-- (the plans of those two queries)
EXPLAIN (COSTS OFF)
SELECT count(*) FROM st_in i WHERE NOT EXISTS (SELECT 1 FROM st_t t WHERE t.k = i.k);
EXPLAIN (COSTS OFF)
SELECT count(*) FROM st_in i WHERE EXISTS (SELECT 1 FROM st_p p WHERE p.k = i.k);

DROP FUNCTION st_scans();
DROP TABLE st_t, st_p, st_in;
