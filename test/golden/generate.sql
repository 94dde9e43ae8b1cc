--
-- test/golden/generate.sql: writes test/golden/filters.txt, the golden
-- filters that test/t/013_golden.pl reads back.
--
-- Run once, from the top of the tree, in a UTF8 database with the
-- extension installed:
--
--   pg_virtualenv -t sh -c 'createdb -T template0 -E UTF8 --locale=C golden &&
--       psql -X -v ON_ERROR_STOP=1 -d golden -f test/golden/generate.sql'
--
-- Never regenerate the file to make the test pass: a difference means that
-- filters stored by an earlier version would answer "absent" for keys they
-- hold, or would not load at all.  Add rows only for what is new.
-- (Exceptions, before the first release: the "enum" row was made again
-- when an enum's family gained the digest of its labels, issue 11.c, and
-- again when the digest gave way to "enum:" and the type's name plus a
-- label guard in the header's last reserved bytes, issue 21: adding a label
-- must not change the family.  Its bits did not change either time.)
--
-- Each row: a name, an SQL expression that builds the filter, and the
-- filter's text form.  Families tied to a PostgreSQL major version
-- (interval, inet, arrays, ...) are left out on purpose.
--
CREATE EXTENSION IF NOT EXISTS bloomfilter;
CREATE TYPE golden_mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN golden_posint AS integer CHECK (VALUE > 0);

CREATE FUNCTION golden_eval(expr text) RETURNS bloom
LANGUAGE plpgsql AS $$
DECLARE
    f bloom;
BEGIN
    EXECUTE 'SELECT ' || expr INTO f;
    RETURN f;
END
$$;

SET timezone = 'UTC';

CREATE TEMP TABLE golden (ord int, name text, expr text);
INSERT INTO golden VALUES
(1, 'empty, one block', $x$bloom_create(1, 0.5)$x$),
(2, 'one integer key, one block', $x$bloom_add(bloom_create(1, 0.5), 1)$x$),
(3, 'integers 1..1000 at 1%', $x$(SELECT bloom_agg(g, 1000, 0.01) FROM generate_series(1, 1000) AS g)$x$),
(4, 'bigint extremes', $x$(SELECT bloom_agg(g, 100, 0.001) FROM unnest(ARRAY[-9223372036854775808, -4294967296, -1, 0, 1, 4294967296, 9223372036854775807]::bigint[]) AS g)$x$),
(5, 'smallint and bigint are integer keys', $x$bloom_add(bloom_add(bloom_create(100, 0.01), 7::smallint), 8::bigint)$x$),
(6, 'integers at 30%', $x$(SELECT bloom_agg(g, 2000, 0.3) FROM generate_series(1, 2000) AS g)$x$),
(7, 'integers at 0.01%', $x$(SELECT bloom_agg(g, 500, 0.0001) FROM generate_series(1, 500) AS g)$x$),
(8, 'integers at 0.0001%', $x$(SELECT bloom_agg(g, 200, 0.000001) FROM generate_series(1, 200) AS g)$x$),
(9, 'unsized bloom_agg of 5000 integers', $x$(SELECT bloom_agg(g) FROM generate_series(1, 5000) AS g)$x$),
(10, 'unsized bloom_agg of 1000 texts', $x$(SELECT bloom_agg('k' || g) FROM generate_series(1, 1000) AS g)$x$),
(11, 'UTF-8 texts', $x$(SELECT bloom_agg(w, 100, 0.01) FROM unnest(ARRAY['', 'a', 'A', 'ключ', 'キー', '🔑', U&'\00e9', U&'e\0301']) AS w)$x$),
(12, 'varchar, char(n) without its blanks, name', $x$bloom_add(bloom_add(bloom_add(bloom_create(100, 0.01), 'ab'::varchar), 'cd  '::char(6)), 'ef'::name)$x$),
(13, 'bytea', $x$(SELECT bloom_agg(decode(md5(g::text), 'hex'), 100, 0.01) FROM generate_series(1, 100) AS g)$x$),
(14, 'uuid', $x$(SELECT bloom_agg(md5(g::text)::uuid, 100, 0.01) FROM generate_series(1, 100) AS g)$x$),
(15, 'boolean', $x$bloom_add(bloom_add(bloom_create(10, 0.01), true), false)$x$),
(16, 'float8 with -0, NaN and infinities', $x$(SELECT bloom_agg(x, 100, 0.01) FROM unnest(ARRAY[0, '-0', 1.5, 'NaN', 'Infinity', '-Infinity', 1e-300, 1e300, 0.1]::float8[]) AS x)$x$),
(17, 'float4', $x$(SELECT bloom_agg(x, 100, 0.01) FROM unnest(ARRAY[0.1, 3.4e38, -1.5, 'NaN']::float4[]) AS x)$x$),
(18, 'numeric', $x$(SELECT bloom_agg(x, 100, 0.01) FROM unnest(ARRAY[0, 1.0, 1.00, -3.14, 1e100, 1e-100, 'NaN', 'Infinity', '-Infinity', 123456789012345678901234567890.123456789]::numeric[]) AS x)$x$),
(19, 'date', $x$(SELECT bloom_agg(d::date, 100, 0.01) FROM generate_series(timestamp '1999-12-25', timestamp '2000-01-05', interval '1 day') AS d)$x$),
(20, 'timestamp', $x$(SELECT bloom_agg(t, 100, 0.01) FROM generate_series(timestamp '1969-12-31 23:59:59.999999', timestamp '1970-01-01 00:00:10', interval '1.5 seconds') AS t)$x$),
(21, 'timestamptz', $x$(SELECT bloom_agg(t, 100, 0.01) FROM unnest(ARRAY['2000-01-01 00:00:00+00', '2024-02-29 12:34:56.789012+05:30', '1901-12-13 20:45:52-08', 'infinity']::timestamptz[]) AS t)$x$),
(22, 'time', $x$(SELECT bloom_agg(t, 100, 0.01) FROM unnest(ARRAY['00:00', '12:34:56.789012', '23:59:59.999999', '24:00']::time[]) AS t)$x$),
(23, 'enum', $x$(SELECT bloom_agg(m, 10, 0.01) FROM unnest(enum_range(NULL::golden_mood)) AS m)$x$),
(24, 'domain over integer', $x$(SELECT bloom_agg(g::golden_posint, 1000, 0.01) FROM generate_series(1, 100) AS g)$x$),
(25, 'union of two filters', $x$(SELECT bloom_union_agg(f) FROM (SELECT bloom_agg(g, 1000, 0.01) AS f FROM generate_series(1, 600) AS g GROUP BY g % 3) AS s)$x$),
(26, 'intersection of two filters', $x$(SELECT a & b FROM (SELECT bloom_agg(g, 1000, 0.01) FROM generate_series(1, 600) AS g) AS x(a), (SELECT bloom_agg(g, 1000, 0.01) FROM generate_series(301, 900) AS g) AS y(b))$x$);

\copy (SELECT name, expr, golden_eval(expr) FROM golden ORDER BY ord) TO 'test/golden/filters.txt'
