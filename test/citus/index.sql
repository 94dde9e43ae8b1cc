-- test/citus/index.sql: the bloomfilter index on a distributed table (run
-- once, not per aggregation mode: no aggregate is involved).

SET client_min_messages = warning;

-- The live-filter index on a distributed table: Citus creates it on every
-- shard; on the coordinator its own index holds none of the rows' keys, so
-- bloom_index_contains asks every shard's index (a new connection to every
-- shard per call, as run_command_on_shards makes them) and must find every
-- key of the table.
CREATE INDEX IF NOT EXISTS ev_i8_bf ON ev USING bloomfilter (i8);
INSERT INTO check_results (mode, name, ok, detail)
SELECT :'mode', 'the bloomfilter index exists on every shard',
	   count(*) > 1 AND bool_and(success AND result = '1'),
	   string_agg(shardid || ': ' || result, ', ')
FROM run_command_on_shards('ev',
	$c$SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	   JOIN pg_am a ON a.oid = c.relam
	   WHERE i.indrelid = '%s'::regclass AND a.amname = 'bloomfilter'$c$);
-- a sample of 20 keys of the table (from the local copy): all found
INSERT INTO check_results (mode, name, ok, detail)
SELECT :'mode', 'bloom_index_contains on the coordinator finds every key of a sample of 20',
	   count(*) = 20 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('ev_i8_bf', i8) AS found
	  FROM ev_local WHERE i8 IS NOT NULL AND id % 97 = 1 ORDER BY id LIMIT 20) s;
-- 20 keys that no row holds (every i8 is a multiple of 1000003, i8 + 1
-- never): most are answered absent
INSERT INTO check_results (mode, name, ok, detail)
SELECT :'mode', 'bloom_index_contains on the coordinator answers false for most absent keys',
	   count(*) = 20 AND count(*) FILTER (WHERE found) < 10,
	   count(*) FILTER (WHERE found) || ' of ' || count(*) || ' absent keys answered true'
FROM (SELECT bloom_index_contains('ev_i8_bf', i8 + 1) AS found
	  FROM ev_local WHERE i8 IS NOT NULL AND id % 97 = 2 ORDER BY id LIMIT 20) s;
INSERT INTO check_results (mode, name, ok, detail)
SELECT :'mode', 'bloom_index_contains on the coordinator is NULL for a NULL key',
	   bloom_index_contains('ev_i8_bf', NULL::bigint) IS NULL, NULL;
-- the other bloom_index_* functions still refuse it
SELECT check_error(:'mode', 'bloom_index_info on the coordinator is refused for a distributed table',
	$$SELECT bloom_index_info('ev_i8_bf')$$, 'is on a distributed table');
SELECT check_error(:'mode', 'bloom_index_partitions on the coordinator is refused for a distributed table',
	$$SELECT bloom_index_partitions('ev_i8_bf', 7::bigint)$$, 'is on a distributed table');

-- The key travels to the shards as text, parsed there under the worker's
-- settings: this session's styles must not change it.  Dates under
-- "SQL, DMY" (02/01/2020, which "ISO, MDY" reads as February 1; on
-- Citus 15 this case passes even without the fixed settings, its
-- connections seem to carry DateStyle, other versions may not)
-- and floats printed short (extra_float_digits = -3 rounds 1/3 of a key to
-- 12 digits: without the fixed settings, all 10 keys are "absent"): every
-- key of a sample of 10 is still found.
CREATE INDEX IF NOT EXISTS ev_d_bf ON ev USING bloomfilter (d);
CREATE INDEX IF NOT EXISTS ev_f8_bf ON ev USING bloomfilter ((f8 / 3));
SET DateStyle = 'SQL, DMY';
SET extra_float_digits = -3;
INSERT INTO check_results (mode, name, ok, detail)
SELECT :'mode', 'bloom_index_contains on the coordinator finds date keys under DateStyle SQL, DMY',
	   count(*) = 10 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('ev_d_bf', d) AS found
	  FROM ev_local WHERE d IS NOT NULL AND extract(day FROM d) <= 12
	  AND id % 89 = 1 ORDER BY id LIMIT 10) s;
INSERT INTO check_results (mode, name, ok, detail)
SELECT :'mode', 'bloom_index_contains on the coordinator finds float keys under extra_float_digits = -3',
	   count(*) = 10 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('ev_f8_bf', f8 / 3) AS found
	  FROM ev_local WHERE f8 IS NOT NULL AND id % 3 <> 0
	  AND id % 89 = 2 ORDER BY id LIMIT 10) s;
RESET DateStyle;
RESET extra_float_digits;
