--
-- bloom_keys: key families and canonical hashing (DESIGN.md, promise 2).
--
-- Equal SQL values must hash equally; a filter remembers its key family and
-- a key of another family is an ERROR naming both, never a silent false.
-- Filters here hold a handful of keys at capacity 100, so a "false" for an
-- absent key is not a matter of luck (and hashing is deterministic anyway).
--

-- the SQLSTATE of a statement, or 'ok'
CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;

--
-- smallint, integer and bigint are one family, both ways
--
SELECT bloom_contains(bloom_add(bloom_create(100), 42::bigint), 42::smallint) AS int8_as_int2,
       bloom_contains(bloom_add(bloom_create(100), 42::bigint), 42::integer) AS int8_as_int4,
       bloom_contains(bloom_add(bloom_create(100), 42::integer), 42::smallint) AS int4_as_int2,
       bloom_contains(bloom_add(bloom_create(100), 42::integer), 42::bigint) AS int4_as_int8,
       bloom_contains(bloom_add(bloom_create(100), 42::smallint), 42::integer) AS int2_as_int4,
       bloom_contains(bloom_add(bloom_create(100), 42::smallint), 42::bigint) AS int2_as_int8,
       bloom_contains(bloom_add(bloom_create(100), 42::smallint), 43::bigint) AS other_key;
-- negative values are sign-extended, whatever the width
SELECT bloom_contains(bloom_add(bloom_create(100), (-1)::smallint), (-1)::bigint) AS minus_one,
       bloom_contains(bloom_add(bloom_create(100), (-32768)::smallint), (-32768)::bigint) AS int2_min,
       bloom_contains(bloom_add(bloom_create(100), (-2147483648)::integer), (-2147483648)::bigint) AS int4_min,
       bloom_contains(bloom_add(bloom_create(100), 4294967295::bigint), (-1)::integer) AS wrapped;
-- the same key through any width gives the same bits
SELECT bloom_add(bloom_create(100), 7::smallint)::bytea = bloom_add(bloom_create(100), 7::bigint)::bytea AS same_bits,
       bloom_add(bloom_create(100), 7::integer)::bytea = bloom_add(bloom_create(100), 7::bigint)::bytea AS same_bits_4_8;

--
-- numeric: equal under numeric "=" means found
--
SELECT bloom_contains(bloom_add(bloom_create(100), 1.0::numeric), 1.00::numeric) AS "1.0_as_1.00",
       bloom_contains(bloom_add(bloom_create(100), 1.0::numeric), 1::numeric) AS "1.0_as_1",
       bloom_contains(bloom_add(bloom_create(100), 1::numeric), 1.000000::numeric) AS "1_as_1.000000",
       bloom_contains(bloom_add(bloom_create(100), 1000::numeric), 1e3::numeric) AS "1000_as_1e3",
       bloom_contains(bloom_add(bloom_create(100), 0.0::numeric), (-0.000)::numeric) AS zero,
       bloom_contains(bloom_add(bloom_create(100), 'NaN'::numeric), 'nan'::numeric) AS nan,
       bloom_contains(bloom_add(bloom_create(100), 1.0::numeric), 1.01::numeric) AS other_key;

--
-- float: -0 = +0, NaN = NaN, real and double precision are one family
--
SELECT bloom_contains(bloom_add(bloom_create(100), '-0'::float8), '0'::float8) AS minus_zero,
       bloom_contains(bloom_add(bloom_create(100), '0'::float8), '-0'::float8) AS plus_zero,
       bloom_contains(bloom_add(bloom_create(100), 'NaN'::float8), 'NaN'::float8) AS nan,
       bloom_contains(bloom_add(bloom_create(100), 'NaN'::float8),
                      'Infinity'::float8 - 'Infinity'::float8) AS computed_nan,
       bloom_contains(bloom_add(bloom_create(100), 1.5::real), 1.5::float8) AS real_as_float8,
       bloom_contains(bloom_add(bloom_create(100), 1.5::float8), 1.5::real) AS float8_as_real,
       bloom_contains(bloom_add(bloom_create(100), '-0'::real), '0'::float8) AS real_minus_zero,
       bloom_contains(bloom_add(bloom_create(100), 'NaN'::real), 'NaN'::float8) AS real_nan,
       bloom_contains(bloom_add(bloom_create(100), 'Infinity'::real), 'Infinity'::float8) AS real_inf;
-- 0.1::real is not 0.1::float8 (they are not equal under "=" either)
SELECT 0.1::real = 0.1::float8 AS sql_equal,
       bloom_contains(bloom_add(bloom_create(100), 0.1::real), 0.1::float8) AS found,
       bloom_contains(bloom_add(bloom_create(100), 0.1::real), 0.1::real::float8) AS found_widened;

--
-- text, varchar, char(n) and name are one family
--
SELECT bloom_contains(bloom_add(bloom_create(100), 'ab'::text), 'ab'::varchar) AS text_as_varchar,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::varchar(10)), 'ab'::text) AS varchar_as_text,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::char(5)), 'ab'::text) AS char5_as_text,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::text), 'ab'::char(5)) AS text_as_char5,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::char(5)), 'ab'::char(2)) AS char5_as_char2,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::name), 'ab'::text) AS name_as_text,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::text), 'ab'::name) AS text_as_name;
-- an untyped literal is text, and so is an untyped NULL (no change)
SELECT bloom_add(bloom_create(100), 'ab')::bytea = bloom_add(bloom_create(100), 'ab'::text)::bytea AS literal_is_text,
       bloom_contains(bloom_add(bloom_create(100), 'ab'), 'ab'::varchar) AS found,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::text), 'ab') AS found_as_literal,
       (bloom_add_new(bloom_create(100), 'ab')).added AS added,
       bloom_add(bloom_create(100), NULL)::bytea = bloom_create(100)::bytea AS null_unchanged,
       bloom_contains(bloom_create(100), NULL) IS NULL AS null_probe;
SELECT bloom_agg(k)::bytea = bloom_agg(k::text)::bytea AS agg_literal_is_text
FROM (VALUES ('x'), ('y')) AS v(k);
-- trailing blanks: they do not count for char(n) and they do for text,
-- exactly as "=" between the two (char(n) becomes text without its blanks)
SELECT 'ab '::text = 'ab'::char(5) AS sql_text_blank_eq_char,
       bloom_contains(bloom_add(bloom_create(100), 'ab '::text), 'ab'::char(5)) AS text_blank_as_char,
       bloom_contains(bloom_add(bloom_create(100), 'ab '::text), 'ab '::char(5)) AS text_blank_as_char_blank,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::char(5)), 'ab '::text) AS char_as_text_blank,
       bloom_contains(bloom_add(bloom_create(100), 'ab '::varchar), 'ab'::varchar) AS varchar_blank,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::text), 'ab  '::char(4)) AS text_as_char_blank;
-- the case matters, and the empty string is a key like any other
SELECT bloom_contains(bloom_add(bloom_create(100), 'ab'::text), 'AB'::text) AS other_case,
       bloom_contains(bloom_add(bloom_create(100), ''::text), ''::text) AS empty_string,
       bloom_contains(bloom_add(bloom_create(100), ''::text), ' '::char(1)) AS empty_as_blank_char;
-- a deterministic collation does not change the bytes
SELECT bloom_contains(bloom_add(bloom_create(100), 'ab'::text COLLATE "C"), 'ab'::text COLLATE "POSIX") AS c_as_posix,
       bloom_add(bloom_create(100), 'ab'::text COLLATE "C")::bytea =
       bloom_add(bloom_create(100), 'ab'::text)::bytea AS same_bits;
-- a key is hashed from its bytes however it is stored: short header,
-- compressed in line, or TOASTed out of line
CREATE TABLE keys_stored (k text, b bytea);
ALTER TABLE keys_stored ALTER COLUMN k SET STORAGE main;
INSERT INTO keys_stored VALUES
    ('short', 'short'),
    (repeat('compressible', 1000), repeat('compressible', 1000)::bytea),
    ((SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) i),
     (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 300) i)::bytea);
SELECT pg_column_compression(k) AS k_compression, pg_column_size(k) < octet_length(k) AS k_smaller_stored,
       bloom_contains(bloom_add(bloom_create(100), k), k || '') AS text_found,
       bloom_contains(bloom_add(bloom_create(100), k || ''), k) AS text_found_rev,
       bloom_contains(bloom_add(bloom_create(100), b), b || ''::bytea) AS bytea_found,
       bloom_contains(bloom_add(bloom_create(100), b || ''::bytea), b) AS bytea_found_rev
FROM keys_stored ORDER BY octet_length(k);

--
-- bytea, uuid, boolean
--
SELECT bloom_contains(bloom_add(bloom_create(100), '\x0102ff'::bytea), '\x0102ff'::bytea) AS bytea,
       bloom_contains(bloom_add(bloom_create(100), '\x0102ff'::bytea), '\x0102'::bytea) AS bytea_prefix,
       bloom_contains(bloom_add(bloom_create(100), ''::bytea), ''::bytea) AS bytea_empty,
       bloom_contains(bloom_add(bloom_create(100), md5('1')::uuid), 'C4CA4238-A0B9-2382-0DCC-509A6F75849B'::uuid) AS uuid,
       bloom_contains(bloom_add(bloom_create(100), md5('1')::uuid), md5('2')::uuid) AS uuid_other,
       bloom_contains(bloom_add(bloom_create(100), true), true) AS bool_true,
       bloom_contains(bloom_add(bloom_create(100), true), false) AS bool_false;

--
-- date, timestamp, timestamptz, time
--
SELECT bloom_contains(bloom_add(bloom_create(100), '2024-02-29'::date), '2024-02-29'::date) AS date,
       bloom_contains(bloom_add(bloom_create(100), '2024-02-29'::date), '2024-03-01'::date) AS date_other,
       bloom_contains(bloom_add(bloom_create(100), 'infinity'::date), 'infinity'::date) AS date_inf,
       bloom_contains(bloom_add(bloom_create(100), '2024-02-29 12:34:56.789'::timestamp),
                      '2024-02-29 12:34:56.789000'::timestamp) AS ts,
       bloom_contains(bloom_add(bloom_create(100), '2024-02-29 12:34:56'::timestamp),
                      '2024-02-29 12:34:57'::timestamp) AS ts_other,
       bloom_contains(bloom_add(bloom_create(100), '2024-02-29 12:00:00+00'::timestamptz),
                      '2024-02-29 14:00:00+02'::timestamptz) AS tstz_same_instant,
       bloom_contains(bloom_add(bloom_create(100), '2024-02-29 12:00:00+00'::timestamptz),
                      '2024-02-29 12:00:00+02'::timestamptz) AS tstz_other_instant,
       bloom_contains(bloom_add(bloom_create(100), '12:34:56'::time), '12:34:56.000'::time) AS time,
       bloom_contains(bloom_add(bloom_create(100), '12:34:56'::time), '12:34:57'::time) AS time_other;
-- the bits of a timestamptz do not depend on the session's time zone
CREATE TABLE keys_tz AS
    SELECT bloom_add(bloom_create(100), '2024-02-29 12:00:00+00'::timestamptz)::bytea AS b;
SET TimeZone = 'America/New_York';
SELECT bloom_add(bloom_create(100), '2024-02-29 07:00:00'::timestamptz)::bytea = b AS same_bits_other_zone
FROM keys_tz;
RESET TimeZone;

--
-- an enum is hashed by its label, not by its OID: the type dropped and made
-- again (new OIDs, labels in another order) gives the same filter; its
-- family is the type, and the filter records the labels its keys were
-- hashed under, so a renamed label makes the filters made before refused,
-- never silently "absent" (an added label does not: see bloom_enum)
--
CREATE TYPE keys_mood AS ENUM ('a', 'b', 'c');
CREATE TABLE keys_enum AS
    SELECT bloom_add(bloom_create(100), 'b'::keys_mood)::text AS t;
DROP TYPE keys_mood;
CREATE TYPE keys_mood AS ENUM ('c', 'b', 'a');
SELECT bloom_add(bloom_create(100), 'b'::keys_mood)::text = t AS same_text_form,
       bloom_contains(t::bloom, 'b'::keys_mood) AS found,
       bloom_contains(t::bloom, 'a'::keys_mood) AS other_label
FROM keys_enum;
SELECT (bloom_info(t::bloom)).key_family AS family
FROM keys_enum;
ALTER TYPE keys_mood RENAME VALUE 'b' TO 'bee';
SELECT bloom_contains(t::bloom, 'bee'::keys_mood) FROM keys_enum;
SELECT pg_temp.sqlstate_of($$SELECT bloom_add(t::bloom, 'a'::keys_mood) FROM keys_enum$$) AS add_after_rename,
       pg_temp.sqlstate_of($$SELECT bloom_union(t::bloom, bloom_agg(m, 100, 0.01)) FROM keys_enum, unnest(enum_range(NULL::keys_mood)) m GROUP BY t$$) AS union_after_rename;
ALTER TYPE keys_mood RENAME VALUE 'bee' TO 'b';
SELECT bloom_contains(t::bloom, 'b'::keys_mood) AS found_again FROM keys_enum;
ALTER TYPE keys_mood ADD VALUE 'd';
SELECT pg_temp.sqlstate_of($$SELECT bloom_contains(t::bloom, 'b'::keys_mood) FROM keys_enum$$) AS after_add_value;
-- the functions that read the catalog for a key say so
SELECT p.oid::regprocedure AS function, p.provolatile
FROM pg_proc p
WHERE p.proname IN ('bloom_add', 'bloom_add_new', 'bloom_contains', 'bloom_agg_trans')
  AND 'anycompatible'::regtype = ANY (p.proargtypes)
ORDER BY 1::text;
-- another enum type with the same label is another family
CREATE TYPE keys_mood2 AS ENUM ('b');
SELECT bloom_contains(t::bloom, 'b'::keys_mood2) FROM keys_enum;
-- and an enum label is not text (not read by the label: sql/bloom_untyped.sql)
SELECT bloom_contains(t::bloom, 'b'::text) FROM keys_enum;

--
-- a domain is its base type
--
CREATE DOMAIN keys_posint AS integer CHECK (VALUE > 0);
CREATE DOMAIN keys_short_text AS varchar(10);
SELECT bloom_contains(bloom_add(bloom_create(100), 5::keys_posint), 5::bigint) AS domain_as_int8,
       bloom_contains(bloom_add(bloom_create(100), 5::smallint), 5::keys_posint) AS int2_as_domain,
       bloom_add(bloom_create(100), 5::keys_posint)::bytea = bloom_add(bloom_create(100), 5)::bytea AS same_bits,
       bloom_contains(bloom_add(bloom_create(100), 'ab'::keys_short_text), 'ab'::text) AS text_domain;
-- (a text key is read as a bigint: sql/bloom_untyped.sql)
SELECT bloom_contains(bloom_add(bloom_create(100), 5::keys_posint), '5'::text);

--
-- other types with a default hash operator class: equal under "=" is found
--
SELECT '1 day'::interval = '24 hours'::interval AS sql_equal,
       bloom_contains(bloom_add(bloom_create(100), '1 day'::interval), '24 hours'::interval) AS day_as_hours,
       bloom_contains(bloom_add(bloom_create(100), '24 hours'::interval), '1 day'::interval) AS hours_as_day,
       bloom_contains(bloom_add(bloom_create(100), '1 mon'::interval), '30 days'::interval) AS month_as_days,
       bloom_contains(bloom_add(bloom_create(100), '1 day'::interval), '25 hours'::interval) AS other;
SELECT bloom_contains(bloom_add(bloom_create(100), '[1,5)'::int4range), '[1,4]'::int4range) AS range_canonical,
       bloom_contains(bloom_add(bloom_create(100), 'empty'::int4range), '[3,3)'::int4range) AS range_empty,
       bloom_contains(bloom_add(bloom_create(100), '[1,5)'::int4range), '[1,6)'::int4range) AS range_other,
       bloom_contains(bloom_add(bloom_create(100), ARRAY[1, 2, 3]), '{1,2,3}'::int[]) AS array_found,
       bloom_contains(bloom_add(bloom_create(100), ARRAY[1, 2, 3]), ARRAY[3, 2, 1]) AS array_other,
       bloom_contains(bloom_add(bloom_create(100), ARRAY[1.0, 2.0]), ARRAY[1.00, 2]) AS numeric_array,
       bloom_contains(bloom_add(bloom_create(100), '1.2.3.4'::inet), '1.2.3.4/32'::inet) AS inet,
       bloom_contains(bloom_add(bloom_create(100), '12:00+01'::timetz), '12:00+01'::timetz) AS timetz;
-- two such types are two families (the error is not shown: the family names
-- of these types carry the PostgreSQL major version)
SELECT pg_temp.sqlstate_of($$SELECT bloom_contains(bloom_add(bloom_create(100), '1 day'::interval), '[1,5)'::int4range)$$) AS interval_vs_range,
       pg_temp.sqlstate_of($$SELECT bloom_contains(bloom_add(bloom_create(100), ARRAY[1]), ARRAY[1::bigint])$$) AS int4_array_vs_int8_array,
       pg_temp.sqlstate_of($$SELECT bloom_add(bloom_add(bloom_create(100), '1 day'::interval), 1)$$) AS interval_then_int;

--
-- a type without a hash operator class is refused, with a hint to cast it
--
SELECT bloom_add(bloom_create(100), point(1, 2));
SELECT bloom_contains(bloom_create(100), '{"a": 1}'::json);
SELECT bloom_agg(k) FROM (VALUES ('{"a": 1}'::json)) AS v(k);
SELECT pg_temp.sqlstate_of($$SELECT bloom_add(bloom_create(100), point(1, 2))$$) AS point,
       pg_temp.sqlstate_of($$SELECT bloom_contains(bloom_create(100), '{}'::json)$$) AS json;
-- the cast the hint suggests works
SELECT bloom_contains(bloom_add(bloom_create(100), '{"a": 1}'::json::text), '{"a": 1}'::text) AS json_as_text;
-- jsonb does have a hash operator class
SELECT bloom_contains(bloom_add(bloom_create(100), '{"a": 1, "b": 2}'::jsonb), '{"b": 2, "a": 1}'::jsonb) AS jsonb;

--
-- a key of another family is an error naming both families
--
CREATE TABLE keys_fam (int_f bloom, text_f bloom, numeric_f bloom, bytea_f bloom);
INSERT INTO keys_fam VALUES (bloom_add(bloom_create(100), 1),
                        bloom_add(bloom_create(100), 'x'::text),
                        bloom_add(bloom_create(100), 1.5),
                        bloom_add(bloom_create(100), '\x01'::bytea));
-- probes
SELECT bloom_contains(int_f, 'x'::text) FROM keys_fam;
SELECT bloom_contains(text_f, '\x01'::bytea) FROM keys_fam;
SELECT bloom_contains(numeric_f, 1) FROM keys_fam;
SELECT bloom_contains(int_f, 1.0) FROM keys_fam;
SELECT bloom_contains(int_f, 1.0::float8) FROM keys_fam;
SELECT bloom_contains(bytea_f, md5('1')::uuid) FROM keys_fam;
SELECT bloom_contains(text_f, true) FROM keys_fam;
SELECT bloom_contains(bloom_add(bloom_create(100), '2024-01-01'::date), '2024-01-01'::timestamp);
SELECT bloom_contains(bloom_add(bloom_create(100), '2024-01-01'::timestamp), '2024-01-01'::timestamptz);
-- additions
SELECT bloom_add(int_f, 'x'::text) FROM keys_fam;
SELECT bloom_add(text_f, '\x01'::bytea) FROM keys_fam;
SELECT bloom_add(numeric_f, 1) FROM keys_fam;
SELECT bloom_add(int_f, 1.5) FROM keys_fam;
-- all of them are DATATYPE_MISMATCH
SELECT pg_temp.sqlstate_of('SELECT bloom_contains(int_f, ''x''::text) FROM keys_fam') AS contains_int_text,
       pg_temp.sqlstate_of('SELECT bloom_contains(text_f, ''\x01''::bytea) FROM keys_fam') AS contains_text_bytea,
       pg_temp.sqlstate_of('SELECT bloom_contains(numeric_f, 1) FROM keys_fam') AS contains_numeric_int,
       pg_temp.sqlstate_of('SELECT bloom_add(int_f, ''x''::text) FROM keys_fam') AS add_int_text,
       pg_temp.sqlstate_of('SELECT bloom_add(text_f, ''\x01''::bytea) FROM keys_fam') AS add_text_bytea,
       pg_temp.sqlstate_of('SELECT bloom_add(numeric_f, 1) FROM keys_fam') AS add_numeric_int;
-- the same through a stored, TOASTed filter (bloom_contains's cache path)
CREATE TABLE keys_big_fam AS SELECT bloom_add(bloom_create(100000), 1) AS f;
SELECT pg_column_size(f) > 100000 AS out_of_line FROM keys_big_fam;
SELECT bloom_contains(f, 1::bigint) AS found FROM keys_big_fam;
SELECT bloom_contains(f, 'x'::text) FROM keys_big_fam;
SELECT count(*) FILTER (WHERE bloom_contains(f, i)) AS found
FROM keys_big_fam, generate_series(1, 3) i;

--
-- a filter without keys accepts any family, and its first key fixes it
--
SELECT bloom_contains(bloom_create(100), 1) AS int_probe,
       bloom_contains(bloom_create(100), 'x'::text) AS text_probe,
       bloom_contains(bloom_create(100), md5('1')::uuid) AS uuid_probe,
       bloom_contains(bloom_create(100), '1 day'::interval) AS interval_probe;
SELECT bloom_contains(bloom_add(bloom_create(100), 'x'::text), 'x'::varchar) AS text_fixed;
SELECT bloom_contains(bloom_add(bloom_create(100), 'x'::text), 1);
SELECT bloom_add(bloom_add(bloom_create(100), 1::smallint), 'x'::text);
-- a stored empty filter too
CREATE TABLE keys_empty AS SELECT bloom_create(100000) AS f;
SELECT bloom_contains(f, 1) AS int_probe, bloom_contains(f, 'x'::text) AS text_probe FROM keys_empty;

--
-- a nondeterministic collation is refused: equal strings would not be
-- equal bytes
--
CREATE COLLATION keys_case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT 'AB' = 'ab' COLLATE keys_case_insensitive AS sql_equal;
SELECT bloom_add(bloom_create(100), 'ab'::text COLLATE keys_case_insensitive);
SELECT bloom_contains(bloom_add(bloom_create(100), 'ab'::text), 'AB'::text COLLATE keys_case_insensitive);
SELECT bloom_contains(bloom_create(100), 'AB'::varchar COLLATE keys_case_insensitive);
SELECT bloom_agg(k COLLATE keys_case_insensitive) FROM (VALUES ('ab'::text)) AS v(k);
CREATE TABLE keys_ci (k text COLLATE keys_case_insensitive);
INSERT INTO keys_ci VALUES ('ab');
SELECT bloom_agg(k) FROM keys_ci;
SELECT bloom_contains(bloom_create(100), k) FROM keys_ci;
SELECT pg_temp.sqlstate_of($$SELECT bloom_add(bloom_create(100), 'ab'::text COLLATE keys_case_insensitive)$$) AS add,
       pg_temp.sqlstate_of($$SELECT bloom_contains(bloom_create(100), k) FROM keys_ci$$) AS contains,
       pg_temp.sqlstate_of($$SELECT bloom_agg(k) FROM keys_ci$$) AS agg;
-- the workarounds: a deterministic collation, on the normalized key or not
SELECT bloom_contains(bloom_add(bloom_create(100), lower(k) COLLATE "C"), 'ab'::text) AS lowered,
       bloom_contains(bloom_add(bloom_create(100), k COLLATE "C"), 'ab'::text) AS collate_c
FROM keys_ci;
SELECT bloom_contains(bloom_agg(upper(k) COLLATE "C"), 'AB'::text) AS agg_upper FROM keys_ci;
-- lower() alone keeps the column's collation, so it is refused as well
SELECT bloom_add(bloom_create(100), lower(k)) FROM keys_ci;

DROP TABLE keys_stored, keys_tz, keys_enum, keys_fam, keys_big_fam, keys_empty, keys_ci;
DROP TYPE keys_mood, keys_mood2;
DROP DOMAIN keys_posint, keys_short_text;
DROP COLLATION keys_case_insensitive;
