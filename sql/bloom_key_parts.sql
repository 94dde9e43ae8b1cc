--
-- bloom_key_parts: keys of generic types (arrays, composites, ranges,
-- domains over them) must not hash anything that changes under a stored
-- filter: an OID (enum values, reg* types), a collation's rules, or a
-- nondeterministic collation anywhere inside.  Such types are refused with
-- an error; everything else is found, as "=" finds it.
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
-- a. a nondeterministic collation inside a container is refused, as it is on
--    a plain text key (it used to leak into the array's hash: 'Apple' and
--    'apple' equal, hashed apart)
--
CREATE COLLATION parts_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE parts_tags (tags text[] COLLATE parts_ci);
INSERT INTO parts_tags VALUES (ARRAY['Apple', 'pear']);
SELECT tags = ARRAY['apple', 'PEAR'] COLLATE parts_ci AS sql_equal FROM parts_tags;
SELECT bloom_agg(tags) FROM parts_tags;
SELECT bloom_contains(bloom_create(10), tags) FROM parts_tags;
SELECT bloom_add(bloom_create(10), ARRAY['a'::text COLLATE parts_ci]);
CREATE TYPE parts_ci_pair AS (a text COLLATE parts_ci, b int);
SELECT bloom_add(bloom_create(10), ROW('x', 1)::parts_ci_pair);
CREATE TYPE parts_ci_range AS RANGE (subtype = text, collation = parts_ci);
SELECT pg_temp.sqlstate_of($$SELECT bloom_add(bloom_create(10), parts_ci_range('a', 'b'))$$) AS ci_range;
-- under a deterministic collation the same arrays are keys, and found
SELECT bloom_contains(bloom_agg(t), ARRAY['Apple', 'pear']) AS found,
       bloom_contains(bloom_agg(t), ARRAY['apple', 'pear']) AS other_case
FROM (VALUES (ARRAY['Apple', 'pear']::text[])) AS v(t);
-- the call site's collation does not change an array's bits
SELECT bloom_add(bloom_create(10), ARRAY['x', 'y'] COLLATE "C")::bytea =
       bloom_add(bloom_create(10), ARRAY['x', 'y'] COLLATE "POSIX")::bytea AS same_bits;

--
-- b. types whose hash is an OID, at any depth, are refused with a hint
--
CREATE TYPE parts_mood AS ENUM ('sad', 'happy');
CREATE TYPE parts_mood_pair AS (m parts_mood, n int);
CREATE DOMAIN parts_moods AS parts_mood[];
SELECT bloom_add(bloom_create(10), ARRAY['sad'::parts_mood]);
SELECT bloom_add(bloom_create(10), ROW('sad', 1)::parts_mood_pair);
SELECT bloom_add(bloom_create(10), 'pg_class'::regclass);
SELECT pg_temp.sqlstate_of($$SELECT bloom_add(bloom_create(10), ARRAY['sad']::parts_moods)$$) AS enum_array_domain,
       pg_temp.sqlstate_of($$SELECT bloom_agg(ARRAY[m]) FROM unnest(enum_range(NULL::parts_mood)) m$$) AS enum_array_agg,
       pg_temp.sqlstate_of($$SELECT bloom_contains(bloom_create(10), ARRAY[ROW('sad', 1)::parts_mood_pair])$$) AS nested,
       pg_temp.sqlstate_of($$SELECT bloom_add(bloom_create(10), 'int4'::regtype)$$) AS regtype,
       pg_temp.sqlstate_of($$SELECT bloom_add(bloom_create(10), ARRAY['pg_class'::regclass])$$) AS regclass_array,
       pg_temp.sqlstate_of($$SELECT bloom_add(bloom_create(10), ROW(1, 'x'))$$) AS anonymous_record;
-- the plain enum is a key (by its label)
SELECT bloom_contains(bloom_add(bloom_create(10), 'sad'::parts_mood), 'sad'::parts_mood) AS enum_found;

--
-- composites are keys; their family records their shape, so that a filter
-- made before ALTER TYPE ... ADD ATTRIBUTE is refused, not silently wrong
--
CREATE TYPE parts_pair AS (a int, b text);
CREATE TABLE parts_pairs AS
    SELECT bloom_agg(ROW(i, 'k' || i)::parts_pair) AS f FROM generate_series(1, 100) i;
SELECT bool_and(bloom_contains(f, ROW(i, 'k' || i)::parts_pair)) AS all_found,
       (bloom_info(f)).key_family ~ '^public\.parts_pair/pg[0-9]+#[0-9a-f]{8}$' AS family_has_shape
FROM parts_pairs, generate_series(1, 100) i GROUP BY f;
ALTER TYPE parts_pair ADD ATTRIBUTE c int;
SELECT pg_temp.sqlstate_of($$SELECT bloom_contains(f, ROW(1, 'k1', NULL)::parts_pair) FROM parts_pairs$$) AS after_add_attribute;

-- the planner's estimate never fails on a refused key type (no row, no call)
CREATE TABLE parts_no_tags (tags text[] COLLATE parts_ci);
SELECT count(*) FROM parts_no_tags WHERE bloom_contains(bloom_create(10), tags);

DROP TABLE parts_tags, parts_no_tags, parts_pairs;
DROP TYPE parts_ci_pair, parts_ci_range, parts_mood_pair, parts_pair;
DROP DOMAIN parts_moods;
DROP TYPE parts_mood;
DROP COLLATION parts_ci;
