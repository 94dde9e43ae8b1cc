-- test/citus/aggregates.sql: every aggregate on the distributed table ev is
-- bit for bit the one over the same rows in ev_local, for every key family,
-- with and without GROUP BY on a column that is not the distribution column.
-- run.sh runs it once per aggregation mode (psql variable mode).

SET client_min_messages = warning;
SELECT set_config('bf.mode', :'mode', false) \gset

DO $$
DECLARE
	m text := current_setting('bf.mode');
	c text;
BEGIN
	FOREACH c IN ARRAY ARRAY['i2', 'i4', 'i8', 't', 'vc', 'u', 'b', 'n', 'd',
							 'ts', 'bo', 'f8', 'e', 'ip', 'r']
	LOOP
		PERFORM check_same(m, 'bloom_agg(' || c || ')',
			'SELECT bloom_agg(' || c || ')::bytea::text FROM %1$I');
		PERFORM check_same(m, 'bloom_agg(' || c || ', 30000, 0.01)',
			'SELECT bloom_agg(' || c || ', 30000, 0.01)::bytea::text FROM %1$I');
		PERFORM check_same(m, 'bloom_agg(' || c || ') GROUP BY g',
			'SELECT string_agg(g || '':'' || md5(f::bytea), '','' ORDER BY g) FROM
			 (SELECT g, bloom_agg(' || c || ') AS f FROM %1$I GROUP BY g) s');
		PERFORM check_same(m, 'bloom_agg(' || c || ', 10000, 0.001) GROUP BY g',
			'SELECT string_agg(g || '':'' || md5(f::bytea), '','' ORDER BY g) FROM
			 (SELECT g, bloom_agg(' || c || ', 10000, 0.001) AS f FROM %1$I GROUP BY g) s');
	END LOOP;
END
$$;

-- the other aggregate forms
SELECT check_same(:'mode', 'bloom_agg over an expression (i8 % 1000)',
	'SELECT bloom_agg(i8 %% 1000)::bytea::text FROM %1$I');
SELECT check_same(:'mode', 'bloom_agg of an unknown literal',
	'SELECT bloom_agg(''x'')::bytea::text FROM %1$I');
SELECT check_same(:'mode', 'bloom_agg over no rows',
	'SELECT bloom_agg(i8)::bytea::text FROM %1$I WHERE id < 0');
SELECT check_same(:'mode', 'bloom_agg(text) over no rows',
	'SELECT bloom_info(bloom_agg(t)) FROM %1$I WHERE id < 0');
SELECT check_same(:'mode', 'bloom_agg GROUP BY the distribution column',
	'SELECT md5(string_agg(md5(f::bytea), '','' ORDER BY id)) FROM
	 (SELECT id, bloom_agg(i8) AS f FROM %1$I GROUP BY id) s');
SELECT check_same(:'mode', 'bloom_agg with FILTER',
	'SELECT bloom_agg(t, 5000, 0.01) FILTER (WHERE id %% 3 = 0)::bytea::text FROM %1$I');

-- set aggregates over stored filters, and over grouped bloom_agg results
SELECT check_same(:'mode', 'bloom_union_agg(f)',
	'SELECT bloom_union_agg(f)::bytea::text FROM %1$I', 'filters', 'filters_local');
SELECT check_same(:'mode', 'bloom_intersect_agg(f)',
	'SELECT bloom_intersect_agg(f)::bytea::text FROM %1$I', 'filters', 'filters_local');
SELECT check_same(:'mode', 'bloom_union_agg(f) GROUP BY g',
	'SELECT string_agg(g || '':'' || md5(f::bytea), '','' ORDER BY g) FROM
	 (SELECT g, bloom_union_agg(f) AS f FROM %1$I GROUP BY g) s', 'filters', 'filters_local');
SELECT check_same(:'mode', 'bloom_intersect_agg(f) GROUP BY g',
	'SELECT string_agg(g || '':'' || md5(f::bytea), '','' ORDER BY g) FROM
	 (SELECT g, bloom_intersect_agg(f) AS f FROM %1$I GROUP BY g) s', 'filters', 'filters_local');
SELECT check_same(:'mode', 'bloom_union_agg over grouped bloom_agg is the whole',
	'SELECT bloom_union_agg(f)::bytea::text FROM
	 (SELECT g, bloom_agg(i8, 30000, 0.01) AS f FROM %1$I GROUP BY g) s');
SELECT check_same(:'mode', 'bloom_union_agg over grouped bloom_agg equals bloom_agg',
	'SELECT (SELECT bloom_union_agg(f) FROM (SELECT g, bloom_agg(i8, 30000, 0.01) AS f FROM %1$I GROUP BY g) s)::bytea::text', 'ev', 'ev_local');
SELECT check_same(:'mode', 'bloom_union_agg over no rows is NULL',
	'SELECT coalesce(bloom_union_agg(f)::text, ''null'') FROM %1$I WHERE id < 0', 'filters', 'filters_local');
