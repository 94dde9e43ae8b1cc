--
-- bloom_untyped: a key passed untyped (PREPARE ... $1, a driver's untyped
-- parameter, pgbench -M prepared) or as a literal arrives as text, since the
-- key argument is polymorphic.  Where the keys are of another family it is
-- read with the input function of the keys' type, as "id = $1" reads it:
-- bloom_index_contains and bloom_index_partitions by the index column's
-- type, bloom_contains by the type of the filter's key family (integer as
-- bigint, ...), where that type's input function is IMMUTABLE (see 3.).  A
-- value the type does not accept gets that type's input error.  A key of the
-- text family for text keys stays text; a generic family has no type to read
-- by and is refused as before.
--
SET client_min_messages = warning;

CREATE TYPE unt_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE unt (id bigint, n numeric, u uuid, d date, m unt_mood,
                  t text, v varchar(10), c char(4));
INSERT INTO unt
SELECT g, g / 10.0, md5(g::text)::uuid, date '2026-01-01' + g,
       (enum_range(NULL::unt_mood))[1 + g % 2], lpad(g::text, 4, '0'),
       g::text, g::text
FROM generate_series(1, 1000) g;
CREATE INDEX unt_id ON unt USING bloomfilter (id);
CREATE INDEX unt_n ON unt USING bloomfilter (n);
CREATE INDEX unt_u ON unt USING bloomfilter (u);
CREATE INDEX unt_d ON unt USING bloomfilter (d);
CREATE INDEX unt_m ON unt USING bloomfilter (m);
CREATE INDEX unt_t ON unt USING bloomfilter (t);
CREATE INDEX unt_v ON unt USING bloomfilter (v);

--
-- 1. bloom_index_contains through PREPARE with an untyped parameter
--
PREPARE unt_id AS SELECT bloom_index_contains('unt_id', $1);
SELECT parameter_types FROM pg_prepared_statements WHERE name = 'unt_id';
EXECUTE unt_id('42');
EXECUTE unt_id(' 42 ');
EXECUTE unt_id('5000000');
-- a wrong value gets the type's input error
\set VERBOSITY default
EXECUTE unt_id('abc');
EXECUTE unt_id('99999999999999999999');
\set VERBOSITY terse
-- the same in a generic plan, and over many rows of one call site
SET plan_cache_mode = force_generic_plan;
PREPARE unt_id_g AS SELECT bloom_index_contains('unt_id', $1);
EXECUTE unt_id_g('42');
EXECUTE unt_id_g('5000000');
RESET plan_cache_mode;
SELECT count(*) FILTER (WHERE bloom_index_contains('unt_id', g::text)) AS found
FROM generate_series(1, 1000) g;
-- a literal is read the same way
SELECT bloom_index_contains('unt_id', '42') AS literal;
-- other key types: numeric (1.0 = 1.00), uuid, date, an enum by its label
PREPARE unt_n AS SELECT bloom_index_contains('unt_n', $1);
EXECUTE unt_n('4.20');
PREPARE unt_u AS SELECT bloom_index_contains('unt_u', $1);
EXECUTE unt_u(md5('42'));
EXECUTE unt_u('not a uuid');
PREPARE unt_d AS SELECT bloom_index_contains('unt_d', $1);
EXECUTE unt_d('2026-02-12');
PREPARE unt_m AS SELECT bloom_index_contains('unt_m', $1);
EXECUTE unt_m('ok');
-- (no row has 'happy')
EXECUTE unt_m('happy');
EXECUTE unt_m('angry');
-- text keys stay text: '0042' is a key, '42' is not (read as a number, it
-- would be); varchar keys are of the text family too
PREPARE unt_t AS SELECT bloom_index_contains('unt_t', $1);
EXECUTE unt_t('0042');
EXECUTE unt_t('42');
PREPARE unt_v AS SELECT bloom_index_contains('unt_v', $1);
EXECUTE unt_v('42');
-- a text column for an index of another family is read the same way (as
-- "id = t::bigint" reads it), and char(n) without its trailing blanks
SELECT bloom_index_contains('unt_id', t) AS from_text_column,
       bloom_index_contains('unt_id', c) AS from_char_column
FROM unt WHERE id = 42;
SELECT bloom_index_contains('unt_id', 'x'::text);
-- a key of another family that is not text is still refused
SELECT bloom_index_contains('unt_id', '\x2a'::bytea);

--
-- 2. bloom_index_partitions, through a partitioned index
--
CREATE TABLE unt_part (k bigint) PARTITION BY RANGE (k);
CREATE TABLE unt_part1 PARTITION OF unt_part FOR VALUES FROM (0) TO (100);
CREATE TABLE unt_part2 PARTITION OF unt_part FOR VALUES FROM (100) TO (200);
INSERT INTO unt_part SELECT generate_series(0, 199);
CREATE INDEX unt_part_bf ON unt_part USING bloomfilter (k);
PREPARE unt_parts AS SELECT * FROM bloom_index_partitions('unt_part_bf', $1);
EXECUTE unt_parts('150');
EXECUTE unt_parts('abc');
PREPARE unt_part_c AS SELECT bloom_index_contains('unt_part_bf', $1);
EXECUTE unt_part_c('7');

--
-- 3. bloom_contains on filters, by the family they record
--
CREATE TABLE unt_f AS
SELECT bloom_agg(id, 1000, 0.01) AS f_id, bloom_agg(n, 1000, 0.01) AS f_n,
       bloom_agg(u, 1000, 0.01) AS f_u, bloom_agg(d, 1000, 0.01) AS f_d,
       bloom_agg(m, 1000, 0.01) AS f_m, bloom_agg(t, 1000, 0.01) AS f_t
FROM unt;
PREPARE unt_c_id AS SELECT bloom_contains(f_id, $1) FROM unt_f;
EXECUTE unt_c_id('42');
EXECUTE unt_c_id('5000000');
EXECUTE unt_c_id('abc');
PREPARE unt_c_all(text, text, text) AS
SELECT bloom_contains(f_n, $1) AS n, bloom_contains(f_u, $2) AS u,
       bloom_contains(f_t, $3) AS t
FROM unt_f;
EXECUTE unt_c_all('4.2', md5('42'), '0042');
EXECUTE unt_c_all('4.21', md5('-42'), '42');
-- bloom_contains(bloom, text) is IMMUTABLE (postgres_fdw ships it): it reads
-- a key only with an IMMUTABLE input function.  A date, time or timestamp
-- depends on DateStyle and TimeZone, an enum label on the catalog: refused
-- as before, and read once cast
PREPARE unt_c_d AS SELECT bloom_contains(f_d, $1) FROM unt_f;
EXECUTE unt_c_d('2026-02-12');
PREPARE unt_c_d2 AS SELECT bloom_contains(f_d, $1::date) FROM unt_f;
EXECUTE unt_c_d2('2026-02-12');
PREPARE unt_c_m AS SELECT bloom_contains(f_m, $1) FROM unt_f;
EXECUTE unt_c_m('ok');
PREPARE unt_c_m2 AS SELECT bloom_contains(f_m, $1::unt_mood) FROM unt_f;
EXECUTE unt_c_m2('ok');
-- a stored (TOASTed) filter goes through the call site's cache
CREATE TABLE unt_big (f bloom);
ALTER TABLE unt_big ALTER f SET STORAGE external;
INSERT INTO unt_big SELECT bloom_agg(g, 100000, 0.01) FROM generate_series(1, 1000) g;
PREPARE unt_big AS SELECT bloom_contains(f, $1) FROM unt_big;
EXECUTE unt_big('42');
EXECUTE unt_big('5000000');
EXECUTE unt_big('abc');
-- filters of different families at one call site
SELECT x.fam, bloom_contains(x.f, x.k) AS found
FROM unt_f, LATERAL (VALUES ('id', f_id, '42'), ('n', f_n, '0.5'), ('t', f_t, '0042'),
                            ('id', f_id, '43'), ('u', f_u, md5('42'))) AS x(fam, f, k);
-- a generic family has no type to read by: refused as before
SELECT bloom_contains(bloom_add(bloom_create(100), '1.2.3.4'::inet), '1.2.3.4'::text);
-- the float family's keys may be real or double precision: '0.1' read as
-- double precision is not the real 0.1 widened, and would answer "absent"
-- for a key that is there, so it is refused as another family
SELECT bloom_contains(bloom_agg(x), '0.1') FROM (VALUES (0.1::real)) v(x);
SELECT bloom_contains(bloom_agg(x), '0.1'::real) FROM (VALUES (0.1::real)) v(x);
-- a char(n) column's keys hash without trailing blanks, as "ch = 'ab  '"
-- reads its literal: an untyped key with them is found
CREATE TABLE unt_ch (ch char(4));
INSERT INTO unt_ch VALUES ('ab');
CREATE INDEX unt_ch_bf ON unt_ch USING bloomfilter (ch);
PREPARE unt_ch AS SELECT bloom_index_contains('unt_ch_bf', $1) AS found;
PREPARE unt_ch_plain AS SELECT EXISTS (SELECT 1 FROM unt_ch WHERE ch = $1) AS plain;
EXECUTE unt_ch('ab  ');
EXECUTE unt_ch_plain('ab  ');
EXECUTE unt_ch('abc');
EXECUTE unt_ch_plain('abc');
SELECT bloom_index_contains('unt_ch_bf', 'ab  ') AS literal;
DROP TABLE unt_ch;

DROP TABLE unt, unt_part, unt_f, unt_big;
DROP TYPE unt_mood;
