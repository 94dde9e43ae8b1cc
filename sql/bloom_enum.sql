--
-- bloom_enum: enum keys across ALTER TYPE.  An enum key hashes its label,
-- so adding a label (ALTER TYPE ... ADD VALUE, also BEFORE or AFTER)
-- changes no key's hash: filters, aggregates and indexes made before go on
-- answering, and take keys of the new label.  Renaming a label changes how
-- its keys hash: what was made before is refused with an error that says
-- so, never answered "absent" for the renamed keys.  The filter records the
-- labels its keys were hashed under (their number and the sum of their
-- hashes, bytes 108 to 119 of the payload); the family is only the type.
--

CREATE FUNCTION pg_temp.sqlstate_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;

-- the label guard of a filter: (number of labels, sum of their hashes)
CREATE FUNCTION pg_temp.guard(f bloom) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT encode(substr(f::bytea, 109, 12), 'hex')
$$;

--
-- stored filters
--
CREATE TYPE en_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE en_filters (name text PRIMARY KEY, f bloom);
INSERT INTO en_filters
SELECT 'agg', bloom_agg(m) FROM unnest(enum_range(NULL::en_mood)) m
UNION ALL
SELECT 'sized', bloom_agg(m, 100, 0.01) FROM unnest(enum_range(NULL::en_mood)) m
UNION ALL
SELECT 'added', bloom_add(bloom_add(bloom_create(100), 'sad'::en_mood), 'happy'::en_mood);
-- the family is the type, without its labels; the guard counts 3 labels
SELECT name, (bloom_info(f)).key_family, substr(pg_temp.guard(f), 1, 8) AS nlabels
FROM en_filters ORDER BY name;

-- labels added at the end, before one and after one: every key is found
ALTER TYPE en_mood ADD VALUE 'meh';
ALTER TYPE en_mood ADD VALUE 'glad' BEFORE 'happy';
ALTER TYPE en_mood ADD VALUE 'blue' AFTER 'sad';
SELECT name,
       bloom_contains(f, 'sad'::en_mood) AS sad,
       bloom_contains(f, 'happy'::en_mood) AS happy,
       bloom_contains(f, 'meh'::en_mood) AS meh
FROM en_filters ORDER BY name;
-- a key of a new label is added and found; the filter then records the
-- labels now (6 of them), the others did not change
UPDATE en_filters SET f = bloom_add(f, 'glad'::en_mood) WHERE name = 'added';
SELECT name,
       bloom_contains(f, 'glad'::en_mood) AS glad,
       bloom_contains(f, 'sad'::en_mood) AS sad,
       substr(pg_temp.guard(f), 1, 8) AS nlabels
FROM en_filters ORDER BY name;
-- adding a key of an old label to a filter whose labels are current
-- changes nothing but the bits
SELECT pg_temp.guard(bloom_add(f, 'ok'::en_mood)) = pg_temp.guard(f) AS same_guard
FROM en_filters WHERE name = 'added';
-- bloom_agg of the column made after the labels were added finds them all
SELECT bool_and(bloom_contains(f, m)) AS all_found
FROM (SELECT bloom_agg(m) AS f FROM unnest(enum_range(NULL::en_mood)) m) a,
     unnest(enum_range(NULL::en_mood)) m;

-- union and intersection of filters made before and after the labels were
-- added: they combine, and the result records the labels now
CREATE TABLE en_after AS
SELECT bloom_agg(m, 100, 0.01) AS f FROM unnest(enum_range(NULL::en_mood)) m;
SELECT bloom_contains(u, 'glad'::en_mood) AS glad, bloom_contains(u, 'sad'::en_mood) AS sad,
       pg_temp.guard(u) = pg_temp.guard(a.f) AS guard_now,
       bloom_contains(i, 'ok'::en_mood) AS common
FROM en_filters o, en_after a,
     LATERAL (SELECT o.f | a.f AS u, o.f & a.f AS i) c
WHERE o.name = 'sized';
SELECT bloom_contains(bloom_union_agg(f), 'blue'::en_mood) AS blue,
       bloom_contains(bloom_union_agg(f), 'ok'::en_mood) AS ok
FROM (SELECT f FROM en_filters WHERE name = 'sized' UNION ALL SELECT f FROM en_after) s;
SELECT bloom_union_cardinality(o.f, a.f) > 0 AS estimated
FROM en_filters o, en_after a WHERE o.name = 'sized';

-- several labels added at once are found out too
ALTER TYPE en_mood ADD VALUE 'calm';
ALTER TYPE en_mood ADD VALUE 'tense' BEFORE 'sad';
ALTER TYPE en_mood ADD VALUE 'wry' AFTER 'ok';
SELECT name, bloom_contains(f, 'happy'::en_mood) AS happy FROM en_filters ORDER BY name;

-- a label renamed: every filter that holds keys of its old name is refused,
-- to probe and to add to, with an error that says what happened
ALTER TYPE en_mood RENAME VALUE 'sad' TO 'down';
\set VERBOSITY default
SELECT bloom_contains(f, 'down'::en_mood) FROM en_filters WHERE name = 'agg';
SELECT name,
       pg_temp.sqlstate_of(format('SELECT bloom_contains(f, %L::en_mood) FROM en_filters WHERE name = %L', 'ok', name)) AS probe,
       pg_temp.sqlstate_of(format('SELECT bloom_add(f, %L::en_mood) FROM en_filters WHERE name = %L', 'calm', name)) AS add
FROM en_filters ORDER BY name;
SELECT pg_temp.sqlstate_of($$SELECT bloom_union(o.f, a.f) FROM en_filters o, en_after a WHERE o.name = 'sized'$$) AS union_renamed,
       pg_temp.sqlstate_of($$SELECT bloom_union_agg(f) FROM (SELECT f FROM en_filters WHERE name = 'sized' UNION ALL SELECT f FROM en_after) s$$) AS union_agg_renamed;
-- even when the labels were added after the filter was made, and a key of
-- a new one renamed: the filter that took it recorded the new labels
ALTER TYPE en_mood RENAME VALUE 'down' TO 'sad';
SELECT bloom_contains(f, 'sad'::en_mood) AS found_again FROM en_filters WHERE name = 'agg';
ALTER TYPE en_mood RENAME VALUE 'glad' TO 'joyful';
SELECT pg_temp.sqlstate_of($$SELECT bloom_contains(f, 'joyful'::en_mood) FROM en_filters WHERE name = 'added'$$) AS new_label_renamed;
SELECT bloom_contains(f, 'joyful'::en_mood) AS never_held_it
FROM en_filters WHERE name = 'agg';
ALTER TYPE en_mood RENAME VALUE 'joyful' TO 'glad';

-- fewer labels than when the keys were hashed (the type made again)
CREATE TABLE en_moved AS SELECT f::text AS t FROM en_filters WHERE name = 'agg';
DROP TABLE en_after;
DROP TABLE en_filters;
DROP TYPE en_mood;
CREATE TYPE en_mood AS ENUM ('happy', 'sad');
SELECT bloom_contains(t::bloom, 'sad'::en_mood) FROM en_moved;
-- filters made under different labels of a type this database does not
-- have cannot be checked against it: combining them is refused, but
-- filters made under the same labels combine without the catalog
DROP TYPE en_mood;
SELECT pg_temp.sqlstate_of($$SELECT bloom_union(t::bloom, t::bloom) FROM en_moved$$) AS same_labels;
CREATE TYPE en_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE en_two AS
SELECT t::bloom AS a, bloom_add(t::bloom, 'happy'::en_mood) AS b FROM en_moved;
ALTER TYPE en_mood ADD VALUE 'meh';
UPDATE en_two SET b = bloom_add(b, 'meh'::en_mood);
SELECT pg_temp.guard(a) <> pg_temp.guard(b) AS guards_differ FROM en_two;
ALTER TYPE en_mood RENAME TO en_mood_gone;
SELECT a | b FROM en_two;
ALTER TYPE en_mood_gone RENAME TO en_mood;
SELECT bloom_contains(a | b, 'meh'::en_mood) AS combined FROM en_two;
DROP TABLE en_two, en_moved;

-- many labels added since: the newest labels (by their OIDs, which ADD
-- VALUE hands out in order) are checked at once, whatever their number; past
-- that, which ones were added cannot be told apart in reasonable time, and
-- the filter is refused (a few at a time are fine)
CREATE TABLE en_wide AS
SELECT bloom_agg(m) AS f FROM unnest(enum_range(NULL::en_mood)) m;
DO $$
BEGIN
    FOR i IN 1 .. 40 LOOP
        EXECUTE format('ALTER TYPE en_mood ADD VALUE %L', 'l' || i);
    END LOOP;
END
$$;
SELECT bloom_contains(f, 'ok'::en_mood) AS ok FROM en_wide;
CREATE TABLE en_half AS
SELECT bloom_agg(m) AS f FROM unnest(enum_range(NULL::en_mood)) m;
DO $$
BEGIN
    FOR i IN 41 .. 80 LOOP
        EXECUTE format('ALTER TYPE en_mood ADD VALUE %L', 'l' || i);
    END LOOP;
END
$$;
SELECT bloom_contains(f, 'l7'::en_mood) FROM en_half;
SELECT bloom_contains(f, 'l77'::en_mood) FROM en_half;
-- with an old label renamed as well, the newest are not the difference: a
-- search among 84 labels for 40 gives up
ALTER TYPE en_mood RENAME VALUE 'sad' TO 'blue';
SELECT bloom_contains(f, 'l7'::en_mood) FROM en_half;
DROP TABLE en_wide, en_half;
DROP TYPE en_mood;

--
-- the index: writes and probes go on after labels are added
--
CREATE TYPE en_size AS ENUM ('s', 'm', 'l');
CREATE TABLE en_items (id serial, size en_size);
INSERT INTO en_items (size) SELECT unnest(enum_range(NULL::en_size)) FROM generate_series(1, 10);
CREATE INDEX en_items_bf ON en_items USING bloomfilter (size);
ALTER TYPE en_size ADD VALUE 'xl';
ALTER TYPE en_size ADD VALUE 'xs' BEFORE 's';
ALTER TYPE en_size ADD VALUE 'ml' AFTER 'm';
SELECT bloom_index_contains('en_items_bf', 'm'::en_size) AS m,
       bloom_index_contains('en_items_bf', 'xl'::en_size) AS xl;
INSERT INTO en_items (size) VALUES ('xl'), ('xs'), ('s');
SELECT bloom_index_contains('en_items_bf', 'xl'::en_size) AS xl,
       bloom_index_contains('en_items_bf', 'xs'::en_size) AS xs,
       bloom_index_contains('en_items_bf', 'l'::en_size) AS l,
       bloom_index_verify('en_items_bf') AS missing;
-- a label renamed: inserts and probes are refused until REINDEX
ALTER TYPE en_size RENAME VALUE 'm' TO 'medium';
SELECT bloom_index_contains('en_items_bf', 'medium'::en_size);
INSERT INTO en_items (size) VALUES ('l');
SELECT pg_temp.sqlstate_of($$SELECT bloom_index_contains('en_items_bf', 's'::en_size)$$) AS probe,
       pg_temp.sqlstate_of($$INSERT INTO en_items (size) VALUES ('xl')$$) AS insert;
REINDEX INDEX en_items_bf;
INSERT INTO en_items (size) VALUES ('l');
SELECT bloom_index_contains('en_items_bf', 'medium'::en_size) AS medium,
       bloom_index_verify('en_items_bf') AS missing;
-- the index's layers as bloom values carry the guard of a value (of the
-- labels), which bloom_contains checks: labels added since are accepted
ALTER TYPE en_size ADD VALUE 'xxs' BEFORE 'xs';
SELECT bool_or(bloom_contains(filter, 'medium'::en_size)) AS medium,
       bool_or(bloom_contains(filter, 'xxs'::en_size)) AS xxs
FROM bloom_index_filters('en_items_bf');
-- the index records the labels once a key of a new one goes in: a rename
-- of that label is then seen too
ALTER TYPE en_size ADD VALUE 'xxl';
INSERT INTO en_items (size) VALUES ('xxl');
ALTER TYPE en_size RENAME VALUE 'xxl' TO 'huge';
SELECT pg_temp.sqlstate_of($$SELECT bloom_index_contains('en_items_bf', 'huge'::en_size)$$) AS probe,
       pg_temp.sqlstate_of($$INSERT INTO en_items (size) VALUES ('s')$$) AS insert;
-- a label renamed and its old name added again: the same set of names, so
-- a stored filter cannot tell (its guard is of the labels, which a restore
-- keeps, and it answers false for the renamed label's keys: README, Enum
-- labels); the index's guard is of (OID, label) pairs, and it refuses
REINDEX INDEX en_items_bf;
CREATE TEMP TABLE en_items_filter AS SELECT bloom_agg(size) AS f FROM en_items;
ALTER TYPE en_size RENAME VALUE 'l' TO 'large';
ALTER TYPE en_size ADD VALUE 'l';
SELECT bloom_contains(f, 'large'::en_size) AS filter_large FROM en_items_filter;
SELECT pg_temp.sqlstate_of($$SELECT bloom_index_contains('en_items_bf', 'large'::en_size)$$) AS probe,
       pg_temp.sqlstate_of($$INSERT INTO en_items (size) VALUES ('s')$$) AS insert,
       pg_temp.sqlstate_of($$SELECT bloom_index_filters('en_items_bf')$$) AS filters;
DROP TABLE en_items_filter;
-- the type renamed: the index says so
REINDEX INDEX en_items_bf;
ALTER TYPE en_size RENAME TO en_sizes;
INSERT INTO en_items (size) VALUES ('s');
DROP TABLE en_items;
DROP TYPE en_sizes;
