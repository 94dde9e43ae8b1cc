-- test/citus/setup.sql: tables and check helpers, run once on the coordinator.
--
-- ev is distributed by id, ev_local holds the same rows in a plain table on
-- the coordinator; every check runs a query template on both and compares
-- the results as text (filters as their bytes: bit for bit).  The
-- coordinator's own copy of each distributed table is emptied once its rows
-- are on the shards: a query (or an index) that answered from it instead of
-- the shards would find no row.

SET client_min_messages = warning;

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');

CREATE TABLE ev (
	id int, g int,
	i2 smallint, i4 integer, i8 bigint, t text, vc varchar(40), u uuid,
	b bytea, n numeric, d date, ts timestamptz, bo boolean, f8 float8,
	e mood, ip inet, r int4range);

INSERT INTO ev
SELECT i, i % 7,
	(i % 30000)::smallint, i * 3, i::bigint * 1000003, 'key ' || i, 'v' || (i % 5000),
	md5(i::text)::uuid, decode(md5(i::text), 'hex'), (i % 9000) / 100.0,
	DATE '2020-01-01' + i % 3000, TIMESTAMPTZ '2024-01-01 00:00+00' + i * INTERVAL '1 minute',
	i % 3 = 0, i / 8.0, (ARRAY['sad', 'ok', 'happy'])[1 + i % 3]::mood,
	('10.' || (i / 65536) % 256 || '.' || (i / 256) % 256 || '.' || i % 256)::inet,
	int4range(i, i + 1 + i % 5)
FROM generate_series(1, 20000) i;
-- some NULL keys in every column (the aggregates skip them)
UPDATE ev SET i2 = NULL, i4 = NULL, i8 = NULL, t = NULL, vc = NULL, u = NULL,
	b = NULL, n = NULL, d = NULL, ts = NULL, bo = NULL, f8 = NULL, e = NULL,
	ip = NULL, r = NULL
WHERE id % 97 = 0;

CREATE TABLE ev_local AS SELECT * FROM ev;
SELECT create_distributed_table('ev', 'id');
SELECT truncate_local_data_after_distributing_table('ev');

-- filters kept in a table, one per (g, id bucket): for the set aggregates
CREATE TABLE filters AS
SELECT id / 1000 AS id, g, bloom_agg(i8, 5000, 0.01) AS f
FROM ev_local GROUP BY 1, 2;
CREATE TABLE filters_local AS SELECT * FROM filters;
SELECT create_distributed_table('filters', 'id');
SELECT truncate_local_data_after_distributing_table('filters');

CREATE TABLE check_results (
	seq serial, mode text, name text, ok boolean, detail text);

-- the coordinator's copies hold no row (pg_relation_size reads the local
-- relation, not the shards), the shards all of them
INSERT INTO check_results (mode, name, ok, detail)
SELECT 'setup', 'the coordinator''s own copies of ev and filters are empty, the shards hold the rows',
	   pg_relation_size('ev') = 0 AND pg_relation_size('filters') = 0
	   AND (SELECT count(*) FROM ev) = 20000
	   AND (SELECT count(*) FROM filters) = (SELECT count(*) FROM filters_local),
	   format('local sizes %s and %s bytes, %s and %s rows on the shards',
			  pg_relation_size('ev'), pg_relation_size('filters'),
			  (SELECT count(*) FROM ev), (SELECT count(*) FROM filters));

-- Run template (with %1$I for the table) on the distributed table and on the
-- local copy; record whether the results are equal.  An error is a failure
-- that names the error.
CREATE FUNCTION check_same(mode text, name text, template text,
						   dist text DEFAULT 'ev', loc text DEFAULT 'ev_local')
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	a text;
	b text;
BEGIN
	BEGIN
		EXECUTE format(template, dist) INTO a;
		EXECUTE format(template, loc) INTO b;
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO check_results (mode, name, ok, detail) VALUES (mode, name, false, SQLERRM);
		RETURN;
	END;
	INSERT INTO check_results (mode, name, ok, detail)
	VALUES (mode, name, a IS NOT NULL AND a = b,
			CASE WHEN a IS NULL THEN 'NULL result'
				 WHEN a <> b THEN 'distributed ' || left(a, 40) || '... <> local ' || left(b, 40) || '...' END);
END
$$;

-- Record the row (ok boolean, detail text) that query returns.  An error is
-- a failure that names the error.
CREATE FUNCTION check_query(mode text, name text, query text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	res_ok boolean;
	res_detail text;
BEGIN
	BEGIN
		EXECUTE query INTO res_ok, res_detail;
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO check_results (mode, name, ok, detail) VALUES (mode, name, false, SQLERRM);
		RETURN;
	END;
	INSERT INTO check_results (mode, name, ok, detail)
	VALUES (mode, name, coalesce(res_ok, false), res_detail);
END
$$;

-- Record whether EXPLAIN (VERBOSE) of query matches the regular expression
-- want (and not dontwant).
CREATE FUNCTION check_plan(mode text, name text, query text, want text, dontwant text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	plan text := '';
	line text;
BEGIN
	BEGIN
		FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
			plan := plan || line || E'\n';
		END LOOP;
	EXCEPTION WHEN OTHERS THEN
		INSERT INTO check_results (mode, name, ok, detail) VALUES (mode, name, false, SQLERRM);
		RETURN;
	END;
	INSERT INTO check_results (mode, name, ok, detail)
	VALUES (mode, name, plan ~ want AND (dontwant IS NULL OR plan !~ dontwant),
			CASE WHEN NOT (plan ~ want AND (dontwant IS NULL OR plan !~ dontwant)) THEN plan END);
END
$$;

-- Record whether query raises an error whose message matches want.
CREATE FUNCTION check_error(mode text, name text, query text, want text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE query;
	INSERT INTO check_results (mode, name, ok, detail) VALUES (mode, name, false, 'no error');
EXCEPTION WHEN OTHERS THEN
	INSERT INTO check_results (mode, name, ok, detail)
	VALUES (mode, name, SQLERRM ~ want, CASE WHEN SQLERRM !~ want THEN SQLERRM END);
END
$$;
