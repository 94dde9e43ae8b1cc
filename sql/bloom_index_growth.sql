--
-- bloom_index_growth: a bloomfilter index grows by layers during CREATE
-- INDEX exactly as it does under inserts.  A layer takes keys until it holds
-- its capacity (keys that set a bit in it); the next key adds a layer of
-- twice the capacity.  So a table of exactly capacity distinct keys gets one
-- layer, one more key two, and the same keys give the same layers whether
-- CREATE INDEX reads them from the table or inserts bring them one by one;
-- and an index built over many times its capacity keeps the rate it
-- promises.
--
-- Every table turns autovacuum off: a VACUUM may compact an index of
-- several layers into one.  The builds are serial, but for one column of the
-- first part: a parallel build sets the keys of the table's parts in another
-- order (the same bits in one layer, which is all it builds).
--
SET client_min_messages = warning;
SET max_parallel_maintenance_workers = 0;

--
-- 1. Layers at the boundaries: capacity 1,000, at a rate so small that no key
--    of these is a false positive of the ones before it (each sets a bit, so
--    each counts).  1,000 keys fill the first layer; 1,001 need a second (of
--    2,000); 3,000 fill both; 3,001 need a third.  Built by CREATE INDEX over
--    the table (also in parallel, when the statistics say the rows fit one
--    layer: a parallel build that finds more keys than that is made again
--    serially, as at 1,001 keys here), and by inserts
--    into an empty index, one statement of all the keys and one statement per
--    key
--
CREATE FUNCTION bfgr_layers(n int, how text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	layers int;
BEGIN
	CREATE TABLE bfgr (k int) WITH (autovacuum_enabled = off, parallel_workers = 2);
	IF how = 'build' THEN
		INSERT INTO bfgr SELECT g FROM generate_series(1, n) g;
	ELSIF how = 'parallel build' THEN
		-- statistics of at most 1,000 rows: the planner expects them to fit
		-- one layer, and the build runs in parallel
		INSERT INTO bfgr SELECT g FROM generate_series(1, least(n, 1000)) g;
		ANALYZE bfgr;
		INSERT INTO bfgr SELECT g FROM generate_series(1001, n) g;
		SET LOCAL max_parallel_maintenance_workers = 2;
	END IF;
	CREATE INDEX bfgr_k ON bfgr USING bloomfilter (k)
		WITH (capacity = 1000, false_positive_rate = 1e-6);
	IF how = 'insert' THEN
		INSERT INTO bfgr SELECT g FROM generate_series(1, n) g;
	ELSIF how = 'one by one' THEN
		FOR i IN 1..n LOOP
			INSERT INTO bfgr VALUES (i);
		END LOOP;
	END IF;
	SET LOCAL max_parallel_maintenance_workers = 0;
	SELECT i.layers INTO layers FROM bloom_index_info('bfgr_k') i;
	IF bloom_index_verify('bfgr_k') <> 0 THEN
		RAISE EXCEPTION 'index of % keys (%) misses keys', n, how;
	END IF;
	DROP TABLE bfgr;
	RETURN layers;
END $$;
SELECT n, bfgr_layers(n, 'build') AS build,
	   bfgr_layers(n, 'parallel build') AS parallel_build,
	   bfgr_layers(n, 'insert') AS insert, bfgr_layers(n, 'one by one') AS one_by_one
FROM unnest(ARRAY[1, 999, 1000, 1001, 2999, 3000, 3001]) AS n;

-- keys repeated, and keys that are present already, count once: 5,000 rows
-- of 999 distinct keys fit the one layer, and inserting them all again adds
-- nothing; one new key fills it, the next adds a layer
CREATE TABLE bfgr_dup (k int) WITH (autovacuum_enabled = off);
INSERT INTO bfgr_dup SELECT g % 999 FROM generate_series(1, 5000) g;
CREATE INDEX bfgr_dup_k ON bfgr_dup USING bloomfilter (k)
	WITH (capacity = 1000, false_positive_rate = 1e-6);
SELECT layers AS built FROM bloom_index_info('bfgr_dup_k');
INSERT INTO bfgr_dup SELECT g % 999 FROM generate_series(1, 5000) g;
SELECT layers AS after_reinsert FROM bloom_index_info('bfgr_dup_k');
INSERT INTO bfgr_dup VALUES (1000);
SELECT layers AS key_1000 FROM bloom_index_info('bfgr_dup_k');
INSERT INTO bfgr_dup VALUES (1001);
SELECT layers AS key_1001, bloom_index_verify('bfgr_dup_k') AS missing
FROM bloom_index_info('bfgr_dup_k');
DROP TABLE bfgr_dup;

--
-- 2. CREATE INDEX over 20 times its capacity: 100,000 distinct keys at
--    capacity 5,000 fill layers of 5,000, 10,000, 20,000 and 40,000 (75,000
--    keys) and go on into a fifth; every key is found, and the false-positive
--    rate measured over 200,000 absent keys is within the 1% requested
--
CREATE TABLE bfgb (k int) WITH (autovacuum_enabled = off);
INSERT INTO bfgb SELECT g FROM generate_series(1, 100000) g;
CREATE INDEX bfgb_k ON bfgb USING bloomfilter (k)
	WITH (capacity = 5000, false_positive_rate = 0.01);
SELECT capacity, false_positive_rate, layers, expected_rate < 0.01 AS expected_ok,
	   estimated_keys BETWEEN 95000 AND 105000 AS keys_ok
FROM bloom_index_info('bfgb_k');
SELECT bloom_index_verify('bfgb_k') AS missing;
SELECT count(*) FILTER (WHERE bloom_index_contains('bfgb_k', g)) < 200000 * 0.01 AS rate_ok
FROM generate_series(1000001, 1200000) g;

-- the same keys inserted into an empty index of the same capacity: the same
-- layers, and the same answer to every probe (the 100,000 present keys and
-- 200,000 absent ones): the same bits in each layer
CREATE TABLE bfgi (k int) WITH (autovacuum_enabled = off);
CREATE INDEX bfgi_k ON bfgi USING bloomfilter (k)
	WITH (capacity = 5000, false_positive_rate = 0.01);
INSERT INTO bfgi SELECT g FROM generate_series(1, 100000) g;
SELECT layers, bloom_index_verify('bfgi_k') AS missing FROM bloom_index_info('bfgi_k');
SELECT count(*) FILTER (WHERE bloom_index_contains('bfgb_k', g)
						  <> bloom_index_contains('bfgi_k', g)) AS answers_differ
FROM (SELECT generate_series(1, 100000) UNION ALL
	  SELECT generate_series(1000001, 1200000)) AS keys(g);
-- and a REINDEX of the grown index builds it again the same
REINDEX INDEX bfgi_k;
SELECT layers FROM bloom_index_info('bfgi_k');

DROP TABLE bfgb, bfgi;
DROP FUNCTION bfgr_layers(int, text);
