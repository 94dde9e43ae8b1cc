-- test/citus/index.sql: the bloomfilter index on a distributed table (run
-- once, not per aggregation mode: no aggregate is involved).

SET client_min_messages = warning;

-- The live-filter index on a distributed table: Citus creates it on every
-- shard.  The coordinator's own copy of ev is empty (setup.sql), so its own
-- index holds no key: bloom_index_contains must ask every shard's index (a
-- new connection to every shard per call, as run_command_on_shards makes
-- them) to find the table's keys.  Those connections are most of this
-- script's cost (two thirds of the suite's Citus run with samples of 20 keys
-- and 8 shards), so its samples are small and run.sh makes 2 shards, one on
-- each worker.
CREATE INDEX ev_i8_bf ON ev USING bloomfilter (i8);
SELECT check_query(:'mode', 'the bloomfilter index exists on every shard', $q$
SELECT count(*) > 1 AND bool_and(success AND result = '1'),
	   string_agg(shardid || ': ' || result, ', ')
FROM run_command_on_shards('ev',
	$c$SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	   JOIN pg_am a ON a.oid = c.relam
	   WHERE i.indrelid = %L::regclass AND a.amname = 'bloomfilter'$c$)$q$);
-- a sample of 8 keys of the table (from the local copy): all found
SELECT check_query(:'mode', 'bloom_index_contains on the coordinator finds every key of a sample of 8', $q$
SELECT count(*) = 8 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('ev_i8_bf', i8) AS found
	  FROM ev_local WHERE i8 IS NOT NULL AND id % 97 = 1 ORDER BY id LIMIT 8) s$q$);
-- 8 keys that no row holds (every i8 is a multiple of 1000003, i8 + 1
-- never): most are answered absent
SELECT check_query(:'mode', 'bloom_index_contains on the coordinator answers false for most absent keys', $q$
SELECT count(*) = 8 AND count(*) FILTER (WHERE found) < 4,
	   count(*) FILTER (WHERE found) || ' of ' || count(*) || ' absent keys answered true'
FROM (SELECT bloom_index_contains('ev_i8_bf', i8 + 1) AS found
	  FROM ev_local WHERE i8 IS NOT NULL AND id % 97 = 2 ORDER BY id LIMIT 8) s$q$);
SELECT check_query(:'mode', 'bloom_index_contains on the coordinator is NULL for a NULL key', $q$
SELECT bloom_index_contains('ev_i8_bf', NULL::bigint) IS NULL, NULL$q$);
-- the other bloom_index_* functions still refuse it
SELECT check_error(:'mode', 'bloom_index_info on the coordinator is refused for a distributed table',
	$$SELECT bloom_index_info('ev_i8_bf')$$, 'is on a distributed table');
SELECT check_error(:'mode', 'bloom_index_partitions on the coordinator is refused for a distributed table',
	$$SELECT bloom_index_partitions('ev_i8_bf', 7::bigint)$$, 'is on a distributed table');

-- A shard that cannot answer is an error, never "absent": a key type that
-- exists only on the coordinator (the shards fail to parse the probe), and a
-- shard whose index was dropped on its worker.
SET citus.enable_ddl_propagation = off;
CREATE DOMAIN coordinator_only AS bigint;
RESET citus.enable_ddl_propagation;
SELECT check_error(:'mode', 'a shard that fails the probe is an error',
	$$SELECT bloom_index_contains('ev_i8_bf', 1000003::coordinator_only)$$,
	'^could not probe shard \d+ of "ev" for bloomfilter index "ev_i8_bf"$');
CREATE TABLE ev_lack (id int, k bigint);
SELECT create_distributed_table('ev_lack', 'id');
INSERT INTO ev_lack SELECT i, i * 7 FROM generate_series(1, 1000) i;
CREATE INDEX ev_lack_bf ON ev_lack USING bloomfilter (k);
-- the shard's copy of the index is named after it and its shard id
SELECT r.success AND r.result = 'DROP INDEX' AS dropped
FROM (SELECT shardid, nodename, nodeport
	  FROM pg_dist_shard JOIN pg_dist_shard_placement USING (shardid)
	  WHERE logicalrelid = 'ev_lack'::regclass ORDER BY shardid LIMIT 1) s,
	 master_run_on_worker(ARRAY[s.nodename], ARRAY[s.nodeport],
						  ARRAY[format('DROP INDEX public.%I', 'ev_lack_bf_' || s.shardid)], false) r;
SELECT check_query(:'mode', 'one shard of ev_lack lost its bloomfilter index on its worker', $q$
SELECT count(*) FILTER (WHERE result = '0') = 1 AND count(*) FILTER (WHERE result = '1') = count(*) - 1,
	   string_agg(shardid || ': ' || result, ', ')
FROM run_command_on_shards('ev_lack',
	$c$SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
	   JOIN pg_am a ON a.oid = c.relam
	   WHERE i.indrelid = %L::regclass AND a.amname = 'bloomfilter'$c$)$q$);
-- a key no row holds (would be "absent") and one some row holds
SELECT check_error(:'mode', 'a shard without the index is an error for an absent key, never false',
	$$SELECT bloom_index_contains('ev_lack_bf', 1::bigint)$$,
	'^shard \d+ of "ev_lack" has no bloomfilter index like "ev_lack_bf"$');
SELECT check_error(:'mode', 'a shard without the index is an error for a present key',
	$$SELECT bloom_index_contains('ev_lack_bf', 7000::bigint)$$,
	'^shard \d+ of "ev_lack" has no bloomfilter index like "ev_lack_bf"$');

-- Names that need quoting everywhere the shard command holds one (schema,
-- table, column, enum and domain key types; quotes, spaces, upper case, '%'
-- and format()'s own "%1$s"), and keys with quotes and '%'.
CREATE SCHEMA "Bf 'Q%s ""Sch""";
CREATE TYPE "Bf 'Q%s ""Sch"""."Mo'od %1$s" AS ENUM ('sa''d %s', 'o%k "x"', 'Happy', 'unused');
CREATE DOMAIN "Bf 'Q%s ""Sch"""."D%om 'ain""" AS text CHECK (VALUE <> '');
CREATE TABLE "Bf 'Q%s ""Sch"""."Ta'b %1$s ""T""" (
	"I""d" int, "Co'l %s" "Bf 'Q%s ""Sch"""."Mo'od %1$s",
	"K%ey 'd'" "Bf 'Q%s ""Sch"""."D%om 'ain""", "B ig" bigint);
SELECT create_distributed_table('"Bf ''Q%s ""Sch"""."Ta''b %1$s ""T"""', 'I"d');
INSERT INTO "Bf 'Q%s ""Sch"""."Ta'b %1$s ""T"""
SELECT i, (ARRAY['sa''d %s', 'o%k "x"', 'Happy'])[1 + i % 3]::"Bf 'Q%s ""Sch"""."Mo'od %1$s",
	   'it''s ' || i || '% of "%s" %1$s', i::bigint * 1000003
FROM generate_series(1, 3000) i;
CREATE INDEX "Idx 'e%s""" ON "Bf 'Q%s ""Sch"""."Ta'b %1$s ""T""" USING bloomfilter ("Co'l %s");
CREATE INDEX "Idx 'd%s""" ON "Bf 'Q%s ""Sch"""."Ta'b %1$s ""T""" USING bloomfilter ("K%ey 'd'");
CREATE INDEX "Idx ""P%s' partial" ON "Bf 'Q%s ""Sch"""."Ta'b %1$s ""T""" USING bloomfilter ("B ig")
	WHERE "Co'l %s" <> 'sa''d %s';
SELECT check_query(:'mode', 'quoted names: every enum label of the table is found, the unused one is not', $q$
SELECT array_agg(found ORDER BY l) = '{t,t,t,f}', array_agg(found ORDER BY l)::text
FROM (SELECT l, bloom_index_contains('"Bf ''Q%s ""Sch"""."Idx ''e%s"""', l) AS found
	  FROM unnest(enum_range(NULL::"Bf 'Q%s ""Sch"""."Mo'od %1$s")) l) s$q$);
SELECT check_query(:'mode', 'quoted names: every key of a domain with quotes and % of a sample of 8 is found', $q$
SELECT count(*) = 8 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('"Bf ''Q%s ""Sch"""."Idx ''d%s"""',
			 ('it''s ' || i || '% of "%s" %1$s')::"Bf 'Q%s ""Sch"""."D%om 'ain""") AS found
	  FROM generate_series(7, 3000, 375) i) s$q$);
SELECT check_query(:'mode', 'quoted names: most absent keys of the domain are answered false', $q$
SELECT count(*) = 8 AND count(*) FILTER (WHERE found) < 4,
	   count(*) FILTER (WHERE found) || ' of ' || count(*) || ' absent keys answered true'
FROM (SELECT bloom_index_contains('"Bf ''Q%s ""Sch"""."Idx ''d%s"""',
			 ('it''s ' || i || '% of "%s" %1$s')::"Bf 'Q%s ""Sch"""."D%om 'ain""") AS found
	  FROM generate_series(3007, 6000, 375) i) s$q$);
-- the partial index's predicate names the enum type, which is printed with
-- or without its schema depending on the search_path
SELECT check_query(:'mode', 'quoted names: every key of a partial index of a sample of 8 is found', $q$
SELECT count(*) = 8 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('"Bf ''Q%s ""Sch"""."Idx ""P%s'' partial"', i::bigint * 1000003) AS found
	  FROM generate_series(1, 3000, 47) i WHERE i % 3 <> 0 LIMIT 8) s$q$);
SET search_path = "Bf 'Q%s ""Sch""", public;
SELECT check_query(:'mode', 'quoted names: the partial index answers with its schema SET on the search_path', $q$
SELECT count(*) = 8 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('"Idx ""P%s'' partial"', i::bigint * 1000003) AS found
	  FROM generate_series(1, 3000, 47) i WHERE i % 3 <> 0 LIMIT 8) s$q$);
RESET search_path;

-- The key travels to the shards as text, parsed there under the worker's
-- settings (Citus's connections carry none of this session's): this
-- session's styles must not change it.  ev_when holds the first day of 400
-- months and the intervals -i days -1 hour.  Under DateStyle "SQL, DMY" the
-- first of March 2000 prints as 01/03/2000, which the worker ("ISO, MDY")
-- would read as January 3; under IntervalStyle sql_standard, -5 days
-- -1 hour prints as "-5 1:00:00", which the worker ("postgres") would read
-- as -5 days +1 hour.  Those misread keys are absent (checked first), so a
-- key sent in the session's style would be answered false.
CREATE TABLE ev_when (id int, d date, iv interval);
SELECT create_distributed_table('ev_when', 'id');
INSERT INTO ev_when
SELECT i, (DATE '2000-01-01' + make_interval(months => i - 1))::date,
	   make_interval(days => -i, hours => -1)
FROM generate_series(1, 400) i;
CREATE INDEX ev_when_d_bf ON ev_when USING bloomfilter (d);
CREATE INDEX ev_when_iv_bf ON ev_when USING bloomfilter (iv);
CREATE TABLE ev_when_keys AS
SELECT i, (DATE '2000-01-01' + make_interval(months => i - 1))::date AS d,
	   make_interval(days => -i, hours => -1) AS iv
FROM generate_series(1, 400) i WHERE i % 12 <> 1 AND i % 37 = 2 ORDER BY i LIMIT 5;
SELECT check_query(:'mode', 'the misread dates (month and day swapped) are absent', $q$
SELECT count(*) = 5 AND count(*) FILTER (WHERE found) < 2,
	   count(*) FILTER (WHERE found) || ' of ' || count(*) || ' misread keys answered true'
FROM (SELECT bloom_index_contains('ev_when_d_bf',
			 make_date(extract(year FROM d)::int, 1, extract(month FROM d)::int)) AS found
	  FROM ev_when_keys) s$q$);
SELECT check_query(:'mode', 'the misread intervals (+1 hour for -1 hour) are absent', $q$
SELECT count(*) = 5 AND count(*) FILTER (WHERE found) < 2,
	   count(*) FILTER (WHERE found) || ' of ' || count(*) || ' misread keys answered true'
FROM (SELECT bloom_index_contains('ev_when_iv_bf', make_interval(days => -i, hours => 1)) AS found
	  FROM ev_when_keys) s$q$);
SET DateStyle = 'SQL, DMY';
SET IntervalStyle = sql_standard;
SELECT check_query(:'mode', 'bloom_index_contains on the coordinator finds date keys under DateStyle SQL, DMY', $q$
SELECT count(*) = 5 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('ev_when_d_bf', d) AS found FROM ev_when_keys) s$q$);
SELECT check_query(:'mode', 'bloom_index_contains on the coordinator finds interval keys under IntervalStyle sql_standard', $q$
SELECT count(*) = 5 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('ev_when_iv_bf', iv) AS found FROM ev_when_keys) s$q$);
RESET DateStyle;
RESET IntervalStyle;
-- Floats printed short: extra_float_digits = -3 rounds 1/3 of a key to 12
-- digits, another key.
CREATE INDEX ev_f8_bf ON ev USING bloomfilter ((f8 / 3));
SET extra_float_digits = -3;
SELECT check_query(:'mode', 'bloom_index_contains on the coordinator finds float keys under extra_float_digits = -3', $q$
SELECT count(*) = 5 AND bool_and(found),
	   count(*) || ' keys, ' || count(*) FILTER (WHERE NOT found OR found IS NULL) || ' not found'
FROM (SELECT bloom_index_contains('ev_f8_bf', f8 / 3) AS found
	  FROM ev_local WHERE f8 IS NOT NULL AND id % 3 <> 0
	  AND id % 89 = 2 ORDER BY id LIMIT 5) s$q$);
RESET extra_float_digits;
