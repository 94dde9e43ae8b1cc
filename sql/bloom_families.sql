--
-- bloom_families: the family names that filters record, shown.  Keys of
-- types without canonical bytes are hashed with PostgreSQL's own extended
-- hash, which PostgreSQL may change between major versions, so their family
-- carries the major version ("pg_catalog.int4range/pg15" on PostgreSQL 15,
-- little-endian): after pg_upgrade to another major version such a filter is
-- refused with an error instead of answering "absent" for keys it holds.
-- Names are compared with the one built from server_version_num, so the
-- output is the same on every version.
--

-- the family that filters of this server record for a version-tied type
CREATE FUNCTION pg_temp.tied(typname text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT format('%s/pg%s', typname, current_setting('server_version_num')::int / 10000)
$$;

-- families with canonical bytes carry no version
SELECT (bloom_info(bloom_add(bloom_create(10), 1))).key_family AS int4,
       (bloom_info(bloom_add(bloom_create(10), 1::bigint))).key_family AS int8,
       (bloom_info(bloom_add(bloom_create(10), 'a'::varchar))).key_family AS varchar,
       (bloom_info(bloom_add(bloom_create(10), 1.5::real))).key_family AS real,
       (bloom_info(bloom_add(bloom_create(10), 1.5))).key_family AS numeric,
       (bloom_info(bloom_add(bloom_create(10), now()))).key_family AS timestamptz,
       (bloom_info(bloom_add(bloom_create(10), '\x00'::bytea))).key_family AS bytea;

-- version-tied families: the type name as format_type gives it, qualified
-- where it has no SQL-standard spelling (so "interval" and "integer[]" are
-- not), plus /pg<major>
-- (shown with this server's major version written as <this>)
SELECT key_family = pg_temp.tied(t) AS tied,
       replace(key_family, '/pg' || current_setting('server_version_num')::int / 10000, '/pg<this>')
           AS family
FROM (VALUES
        ('pg_catalog.int4range', bloom_add(bloom_create(10), '[1,5)'::int4range)),
        ('interval', bloom_add(bloom_create(10), '1 day'::interval)),
        ('pg_catalog.inet', bloom_add(bloom_create(10), '1.2.3.4'::inet)),
        ('integer[]', bloom_add(bloom_create(10), ARRAY[1, 2])),
        ('pg_catalog.jsonb', bloom_add(bloom_create(10), '{}'::jsonb))
     ) AS v(t, f),
     LATERAL (SELECT key_family FROM bloom_info(f)) i
ORDER BY t;
-- the aggregate records the same family
SELECT (bloom_info(bloom_agg(r))).key_family = pg_temp.tied('pg_catalog.int4range') AS agg_tied
FROM (VALUES ('[1,2)'::int4range), ('[3,4)')) v(r);
-- a domain over a version-tied type has its base type's family
CREATE DOMAIN fam_range AS int4range;
SELECT (bloom_info(bloom_add(bloom_create(10), '[1,5)'::fam_range))).key_family
       = pg_temp.tied('pg_catalog.int4range') AS domain_tied;
DROP DOMAIN fam_range;
-- an enum's family is "enum:" and its qualified name, without a version
-- (it is hashed by its label) and without its labels (see bloom_enum)
CREATE TYPE fam_mood AS ENUM ('sad', 'happy');
SELECT (bloom_info(bloom_add(bloom_create(10), 'sad'::fam_mood))).key_family AS enum_family;
DROP TYPE fam_mood;

--
-- A filter written by another major version (here its family field, at
-- bytes 44 to 107 of the payload, rewritten to say the previous one, as a
-- filter made there and carried over by pg_upgrade would): probing it or
-- adding to it is an error naming both families, never a silent answer.
--
CREATE FUNCTION pg_temp.with_family(f bloom, family text) RETURNS bloom
LANGUAGE sql AS $$
    SELECT overlay(f::bytea PLACING
                   convert_to(family, 'UTF8') || decode(repeat('00', 64 - octet_length(family)), 'hex')
                   FROM 45 FOR 64)::bloom
$$;
-- the error message, with the two major versions written as "this" and "previous"
CREATE FUNCTION pg_temp.error_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v int := current_setting('server_version_num')::int / 10000;
    msg text;
    detail text;
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || replace(replace(msg || ' (' || detail || ')',
                                               '/pg' || v, '/pg<this>'),
                                       '/pg' || (v - 1), '/pg<previous>');
END
$$;
CREATE TABLE fam_old AS
SELECT pg_temp.with_family(bloom_add(bloom_create(100), '[1,5)'::int4range),
                           format('pg_catalog.int4range/pg%s', current_setting('server_version_num')::int / 10000 - 1)) AS f;
SELECT (bloom_info(f)).key_family = format('pg_catalog.int4range/pg%s', current_setting('server_version_num')::int / 10000 - 1)
       AS previous_major
FROM fam_old;
SELECT pg_temp.error_of($$SELECT bloom_contains(f, '[1,5)'::int4range) FROM fam_old$$) AS probe;
SELECT pg_temp.error_of($$SELECT bloom_add(f, '[1,5)'::int4range) FROM fam_old$$) AS add;
SELECT pg_temp.error_of($$SELECT bloom_union(f, bloom_add(bloom_create(100), '[1,5)'::int4range)) FROM fam_old$$) AS union_;
-- the same filter, its family written back to this version's, finds the key
SELECT bloom_contains(pg_temp.with_family(f, pg_temp.tied('pg_catalog.int4range')), '[1,5)'::int4range) AS found
FROM fam_old;
DROP TABLE fam_old;
