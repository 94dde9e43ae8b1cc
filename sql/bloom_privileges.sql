--
-- bloom_privileges: what a role without special rights can and cannot do
-- with the extension.
--
-- 1. The catalog: every function is C in $libdir/bloomfilter (there are no
--    SQL-language functions, so nothing resolves a name at call time), none
--    is SECURITY DEFINER, has a SET clause, is LEAKPROOF or has a
--    non-default ACL, and the functions that take "internal" are aggregate
--    support functions, the type's receive function and planner support
--    functions only.
-- 2. A plain role uses every function, operator, cast and aggregate.
-- 3. It cannot call the "internal" functions, build its own aggregate out of
--    them, make a binary cast, alter the type, or replace, alter or drop any
--    extension function, and reads no table it has no right to.
-- 4. The owner of the database (not a superuser) drops and creates the
--    extension (trusted): the extension is then its, the objects stay the
--    bootstrap superuser's.
-- 5. Hostile names: another role that may create in the target schema
--    plants look-alike types there, and the installing session has temporary
--    tables named like the types the script uses and a search_path that puts
--    them first; CREATE EXTENSION still refers to pg_catalog's types and
--    functions only.  At call time a hostile schema early in search_path
--    changes nothing about what the extension's aggregates and operators
--    call.
--
-- The test drops and creates the extension (with CASCADE, so it runs after
-- any test whose leftovers depend on the type) and leaves it installed, as
-- the superuser, as it found it.
--
\set VERBOSITY default

SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_bloom_user;
DROP ROLE IF EXISTS regress_bloom_owner;
DROP ROLE IF EXISTS regress_bloom_mallory;
RESET client_min_messages;
CREATE ROLE regress_bloom_user;
CREATE ROLE regress_bloom_owner;
CREATE ROLE regress_bloom_mallory;

-- the members of the extension, by catalog
CREATE VIEW bloom_members AS
SELECT d.classid::regclass AS catalog, d.objid
FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND e.extname = 'bloomfilter';

--
-- 1. The catalog
--
SELECT version, superuser, trusted
FROM pg_available_extension_versions WHERE name = 'bloomfilter';

-- (the array type bloom[], made with bloom, is counted with it: PostgreSQL 17
-- and later record it as a member of its own, 15 and 16 through bloom only)
SELECT catalog, count(*) FROM bloom_members m
WHERE NOT (m.catalog = 'pg_type'::regclass AND
           m.objid IN (SELECT t.typarray FROM bloom_members e JOIN pg_type t ON t.oid = e.objid
                       WHERE e.catalog = 'pg_type'::regclass))
GROUP BY 1 ORDER BY catalog::text COLLATE "C";

-- functions by kind and language: C functions and the four aggregates
SELECT p.prokind, l.lanname, p.probin, count(*)
FROM bloom_members m JOIN pg_proc p ON m.catalog = 'pg_proc'::regclass AND p.oid = m.objid
JOIN pg_language l ON l.oid = p.prolang
GROUP BY 1, 2, 3 ORDER BY 1, 2;

-- nothing runs with other rights or settings, nothing is leakproof, no
-- grants beyond the default EXECUTE for PUBLIC (none expected)
SELECT p.oid::regprocedure AS function, p.prosecdef, p.proconfig, p.proleakproof, p.proacl
FROM bloom_members m JOIN pg_proc p ON m.catalog = 'pg_proc'::regclass AND p.oid = m.objid
WHERE p.prosecdef OR p.proconfig IS NOT NULL OR p.proleakproof OR p.proacl IS NOT NULL;

-- the functions that take "internal", and what uses each: aggregates,
-- the type (its receive function), the planner (a function's SUPPORT) or
-- an access method (its handler); every row must name a user
SELECT p.oid::regprocedure AS function,
       (SELECT string_agg(a.aggfnoid::regprocedure::text, ', ' ORDER BY a.aggfnoid::regprocedure::text COLLATE "C")
        FROM pg_aggregate a
        WHERE p.oid IN (a.aggtransfn, a.aggfinalfn, a.aggcombinefn,
                        a.aggserialfn, a.aggdeserialfn)) AS aggregate_support_of,
       (SELECT string_agg(t.oid::regtype::text, ', ') FROM pg_type t
        WHERE t.typreceive = p.oid) AS receive_of,
       (SELECT string_agg(f.oid::regprocedure::text, ', ' ORDER BY f.oid::regprocedure::text COLLATE "C") FROM pg_proc f
        WHERE f.prosupport = p.oid) AS planner_support_of,
       (SELECT string_agg(am.amname::text, ', ') FROM pg_am am
        WHERE am.amhandler = p.oid) AS handler_of
FROM bloom_members m JOIN pg_proc p ON m.catalog = 'pg_proc'::regclass AND p.oid = m.objid
WHERE 'internal'::regtype = ANY (p.proargtypes)
ORDER BY p.oid::regprocedure::text COLLATE "C";

-- every object the extension refers to lives in pg_catalog or in the
-- extension's own schema (the hostile install below repeats this)
CREATE VIEW bloom_refs AS
WITH refs(what, ref, kind) AS (
    SELECT p.oid::regprocedure::text, t, 'type'
    FROM bloom_members m JOIN pg_proc p ON m.catalog = 'pg_proc'::regclass AND p.oid = m.objid,
         unnest(p.proargtypes::oid[] || p.prorettype || coalesce(p.proallargtypes, '{}')) AS t
    UNION ALL
    SELECT o.oid::regoperator::text, r, k
    FROM bloom_members m JOIN pg_operator o ON m.catalog = 'pg_operator'::regclass AND o.oid = m.objid,
         LATERAL (VALUES (o.oprleft, 'type'), (o.oprright, 'type'), (o.oprresult, 'type'),
                         (o.oprcode::oid, 'proc'), (o.oprrest::oid, 'proc'),
                         (o.oprjoin::oid, 'proc'), (o.oprcom, 'oper'),
                         (o.oprnegate, 'oper')) AS v(r, k)
    UNION ALL
    SELECT a.aggfnoid::regprocedure::text, r, k
    FROM bloom_members m JOIN pg_aggregate a ON m.catalog = 'pg_proc'::regclass AND a.aggfnoid = m.objid,
         LATERAL (VALUES (a.aggtransfn::oid, 'proc'), (a.aggfinalfn::oid, 'proc'),
                         (a.aggcombinefn::oid, 'proc'), (a.aggserialfn::oid, 'proc'),
                         (a.aggdeserialfn::oid, 'proc'), (a.aggtranstype, 'type')) AS v(r, k)
    UNION ALL
    SELECT t.oid::regtype::text, r, 'proc'
    FROM bloom_members m JOIN pg_type t ON m.catalog = 'pg_type'::regclass AND t.oid = m.objid,
         unnest(ARRAY[t.typinput::oid, t.typoutput::oid, t.typreceive::oid, t.typsend::oid]) AS r
    UNION ALL
    SELECT format('cast (%s AS %s)', c.castsource::regtype, c.casttarget::regtype), r, k
    FROM bloom_members m JOIN pg_cast c ON m.catalog = 'pg_cast'::regclass AND c.oid = m.objid,
         LATERAL (VALUES (c.castsource, 'type'), (c.casttarget, 'type'), (c.castfunc, 'proc')) AS v(r, k)
    UNION ALL
    SELECT 'operator class ' || c.opcname, r, k
    FROM bloom_members m JOIN pg_opclass c ON m.catalog = 'pg_opclass'::regclass AND c.oid = m.objid,
         LATERAL (VALUES (c.opcintype, 'type')) AS v(r, k)
    UNION ALL
    SELECT 'operator family ' || f.opfname, ap.amproc::oid, 'proc'
    FROM bloom_members m JOIN pg_opfamily f ON m.catalog = 'pg_opfamily'::regclass AND f.oid = m.objid
    JOIN pg_amproc ap ON ap.amprocfamily = f.oid
    UNION ALL
    SELECT 'operator family ' || f.opfname, ao.amopopr, 'oper'
    FROM bloom_members m JOIN pg_opfamily f ON m.catalog = 'pg_opfamily'::regclass AND f.oid = m.objid
    JOIN pg_amop ao ON ao.amopfamily = f.oid
), placed AS (
    SELECT what, kind, ref,
           CASE kind
               WHEN 'type' THEN (SELECT typnamespace FROM pg_type WHERE oid = ref)
               WHEN 'proc' THEN (SELECT pronamespace FROM pg_proc WHERE oid = ref)
               WHEN 'oper' THEN (SELECT oprnamespace FROM pg_operator WHERE oid = ref)
           END AS nsp
    FROM refs WHERE ref <> 0
)
SELECT what, kind, ref, nsp FROM placed;

SELECT count(*) > 100 AS many_refs FROM bloom_refs;
SELECT what, kind, ref, nsp::regnamespace AS schema FROM bloom_refs
WHERE nsp IS NULL
   OR nsp NOT IN ('pg_catalog'::regnamespace,
                  (SELECT extnamespace FROM pg_extension WHERE extname = 'bloomfilter'));

-- another role's data: a table the plain role has no right to
CREATE TABLE bloom_secret (id int, k text, f bloom);
INSERT INTO bloom_secret
SELECT 1, 'hidden', bloom_add(bloom_create(100), 'hidden'::text);
CREATE INDEX bloom_secret_k ON bloom_secret USING bloomfilter (k);

--
-- 2. A plain role uses every function, operator, cast and aggregate
--
SET ROLE regress_bloom_user;

CREATE TEMP TABLE mine AS
SELECT g, bloom_add(bloom_add(bloom_create(1000), g), g + 1) AS f
FROM generate_series(1, 4) g;

SELECT bloom_contains(f, g) AS has_g, bloom_contains(f, g + 1) AS has_next,
       bloom_contains(f, 1000000) AS has_other
FROM mine ORDER BY g;

-- a bloomfilter index on a table of its own, probed, informed, verified
CREATE TEMP TABLE mine_keys AS SELECT g AS k FROM generate_series(1, 100) g;
CREATE INDEX mine_keys_bf ON mine_keys USING bloomfilter (k);
INSERT INTO mine_keys VALUES (101);
SELECT bloom_index_contains('mine_keys_bf', 101) AS index_has_101,
       (SELECT count(*) FROM bloom_index_partitions('mine_keys_bf', 5)) AS index_partitions,
       (SELECT layers FROM bloom_index_info('mine_keys_bf')) AS index_layers,
       bloom_index_verify('mine_keys_bf') AS index_missing;
-- but not the index of a table it may not read
SELECT bloom_index_contains('bloom_secret_k', 'hidden'::text);
DROP TABLE mine_keys;

-- text and binary forms, and the casts
SELECT count(*) AS round_trips FROM mine
WHERE f::text::bloom = f AND bloom_send(f) = f::bytea AND f::bytea::bloom = f;

-- aggregates: unsized and sized bloom_agg, union and intersection
SELECT bloom_contains(bloom_agg(g), 3) AS unsized,
       bloom_contains(bloom_agg(g, 1000, 0.01), 3) AS sized,
       bloom_contains(bloom_union_agg(f), 5) AS union_agg,
       bloom_contains(bloom_intersect_agg(f), 5) AS intersect_agg
FROM mine;

-- union, intersection, their operators, equality and the estimates
SELECT bloom_contains(bloom_union(a.f, b.f), 4) AS union_has_4,
       bloom_contains(a.f | b.f, 4) AS or_has_4,
       bloom_contains(bloom_intersect(a.f, b.f), 2) AS intersect_has_2,
       bloom_contains(a.f & b.f, 2) AS and_has_2,
       a.f = b.f AS equal, a.f <> b.f AS different,
       round(bloom_cardinality(a.f)) AS card_a,
       round(bloom_union_cardinality(a.f, b.f)) AS card_union,
       round(bloom_intersect_cardinality(a.f, b.f)) AS card_intersect,
       bloom_false_positive_rate(a.f) < 0.01 AS fpr_low
FROM mine a, mine b WHERE a.g = 1 AND b.g = 3;

-- the hash operator class (DISTINCT, GROUP BY, hash joins) and its functions
SET enable_sort = off;
SET enable_nestloop = off;
SELECT count(*) AS distinct_filters
FROM (SELECT DISTINCT f FROM (SELECT f FROM mine UNION ALL SELECT f FROM mine) s) d;
SELECT count(*) AS hash_joined FROM mine a JOIN mine b ON a.f = b.f;
RESET enable_nestloop;
RESET enable_sort;
SELECT bloom_value_hash(f) = bloom_value_hash(f::bytea::bloom) AS hash_stable,
       bloom_value_hash_extended(f, 7) = bloom_value_hash_extended(f::bytea::bloom, 7) AS hash_extended_stable
FROM mine WHERE g = 1;

-- inspecting, sizing, adding with a report
SELECT nbits, nhashes, key_family, design_capacity FROM bloom_info((SELECT f FROM mine WHERE g = 1));
SELECT nbytes, nhashes FROM bloom_size(1000, 0.01);
SELECT added FROM bloom_add_new((SELECT f FROM mine WHERE g = 1), 1);
SELECT added FROM bloom_add_new((SELECT f FROM mine WHERE g = 1), 99);

--
-- 3. What it cannot do
--

-- the functions that take "internal" cannot be called from SQL: no SQL
-- expression has that type.  PostgreSQL 15 refuses the cast ("cannot cast
-- type unknown to internal"), 16 and later the input of the value ("cannot
-- accept a value of type internal"): either is "refused", any other error
-- or a call that runs is shown as it is
CREATE FUNCTION pg_temp.refused(call text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'SELECT ' || call;
    RETURN 'called';
EXCEPTION WHEN OTHERS THEN
    RETURN CASE WHEN SQLERRM IN ('cannot cast type unknown to internal',
                                 'cannot accept a value of type internal')
                THEN 'refused' ELSE SQLERRM END;
END
$$;
SELECT call, pg_temp.refused(call)
FROM unnest(ARRAY['bloom_agg_trans(NULL::internal, 1)',
                  'bloom_agg_final(NULL::internal, 1)',
                  'bloom_union_agg_final(NULL::internal)',
                  'bf_handler(NULL::internal)']) AS call;
DROP FUNCTION pg_temp.refused(text);

-- nor be put together into an aggregate of its own (a state of one kind fed
-- to the final function of another), even where it may create objects
CREATE AGGREGATE pg_temp.mixed(bloom) (
	SFUNC = bloom_union_agg_trans,
	STYPE = internal,
	FINALFUNC = bloom_agg_final,
	FINALFUNC_EXTRA
);

-- no cast that skips the validator, no change to the type
CREATE CAST (bytea AS bloom) WITHOUT FUNCTION;
ALTER TYPE bloom SET (RECEIVE = bloom_recv);

-- the extension's functions are not the role's to change (replacing one is
-- tried again below by a role that may create in public)
CREATE OR REPLACE FUNCTION bloom_contains(bloom, anycompatible) RETURNS boolean
LANGUAGE sql AS 'SELECT true';
ALTER FUNCTION bloom_contains(bloom, anycompatible) VOLATILE;
ALTER FUNCTION bloom_create(bigint, float8) SECURITY DEFINER;
DROP FUNCTION bloom_union(bloom, bloom);
COMMENT ON FUNCTION bloom_union(bloom, bloom) IS 'mine';
DROP EXTENSION bloomfilter;
ALTER EXTENSION bloomfilter UPDATE;

-- nor does any of them open another role's table
SELECT bloom_agg(k) FROM bloom_secret;
SELECT bloom_contains(f, 'hidden'::text) FROM bloom_secret;

-- nor read files
SELECT pg_read_file('postgresql.conf');

RESET ROLE;
DROP TABLE mine;

--
-- 4. The owner of the database creates the extension
--
SELECT current_database() AS dbname,
       pg_get_userbyid(datdba) AS dbowner
FROM pg_database WHERE datname = current_database() \gset
ALTER DATABASE :"dbname" OWNER TO regress_bloom_owner;
DROP TABLE bloom_secret;
SET client_min_messages = warning;
DROP EXTENSION bloomfilter CASCADE;
RESET client_min_messages;

SET ROLE regress_bloom_owner;
CREATE EXTENSION bloomfilter;
SELECT extname, extowner::regrole, extversion FROM pg_extension WHERE extname = 'bloomfilter';
-- the objects belong to the bootstrap superuser, not to the owner
SELECT DISTINCT pg_get_userbyid(p.proowner) = (SELECT rolname FROM pg_roles WHERE oid = 10) AS bootstrap_superuser_owns_functions
FROM pg_proc p WHERE p.proname LIKE 'bloom%';
SELECT pg_get_userbyid(typowner) = (SELECT rolname FROM pg_roles WHERE oid = 10) AS bootstrap_superuser_owns_type
FROM pg_type WHERE typname = 'bloom';
SELECT bloom_contains(bloom_agg(g), 7) AS works FROM generate_series(1, 10) g;
CREATE TEMP TABLE owner_keys AS SELECT g AS k FROM generate_series(1, 10) g;
CREATE INDEX owner_keys_bf ON owner_keys USING bloomfilter (k);
SELECT bloom_index_contains('owner_keys_bf', 7) AS index_works;
DROP TABLE owner_keys;
ALTER EXTENSION bloomfilter UPDATE;
-- being the extension's owner does not make its functions the owner's
ALTER FUNCTION bloom_contains(bloom, anycompatible) VOLATILE;
DROP EXTENSION bloomfilter;
RESET ROLE;

--
-- 5. Hostile names
--

-- a role that may create in public (the default before PostgreSQL 15) plants
-- types named like those the script uses; it cannot make functions that take
-- "internal" (such as look-alike selectivity estimators) at all
GRANT CREATE ON SCHEMA public TO regress_bloom_mallory;
SET ROLE regress_bloom_mallory;
CREATE TYPE public.bytea AS (x int);
CREATE TYPE public.float8 AS (x int);
CREATE TYPE public.cstring AS (x int);
CREATE DOMAIN public.bigint AS text;
CREATE FUNCTION public.eqsel(internal, oid, internal, integer) RETURNS float8
LANGUAGE sql AS 'SELECT 0.5::float8';
CREATE FUNCTION public.bloom_agg_trans(text, anycompatible) RETURNS text
LANGUAGE sql AS 'SELECT $1';
RESET ROLE;

-- CREATE in public does not let it take over a function of the extension
-- either (installed by the database owner here)
SET ROLE regress_bloom_owner;
CREATE EXTENSION bloomfilter;
SET ROLE regress_bloom_mallory;
CREATE OR REPLACE FUNCTION public.bloom_contains(bloom, anycompatible) RETURNS boolean
LANGUAGE sql AS 'SELECT true';
SET ROLE regress_bloom_owner;
DROP EXTENSION bloomfilter;
RESET ROLE;

-- the installing session: temporary tables named like types, and a
-- search_path with a schema of look-alikes first, pg_catalog after it
SET ROLE regress_bloom_owner;
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.bloom_agg_final(text, anycompatible) RETURNS text
LANGUAGE sql AS 'SELECT ''hijacked''';
CREATE FUNCTION hostile.bloom_union(text, text) RETURNS text
LANGUAGE sql AS 'SELECT ''hijacked''';
CREATE TEMP TABLE boolean (x int);
CREATE TEMP TABLE internal (x int);
CREATE TEMP TABLE anycompatible (x int);
SET search_path = hostile, pg_temp, pg_catalog, public;
CREATE EXTENSION bloomfilter SCHEMA public;
RESET search_path;
DROP TABLE pg_temp.boolean, pg_temp.internal, pg_temp.anycompatible;
RESET ROLE;

-- still only pg_catalog and public: the members and what they refer to
SELECT count(*) AS members_elsewhere FROM bloom_members m
WHERE CASE m.catalog::text
          WHEN 'pg_proc' THEN (SELECT pronamespace FROM pg_proc WHERE oid = m.objid)
          WHEN 'pg_type' THEN (SELECT typnamespace FROM pg_type WHERE oid = m.objid)
          WHEN 'pg_operator' THEN (SELECT oprnamespace FROM pg_operator WHERE oid = m.objid)
          WHEN 'pg_opclass' THEN (SELECT opcnamespace FROM pg_opclass WHERE oid = m.objid)
          WHEN 'pg_opfamily' THEN (SELECT opfnamespace FROM pg_opfamily WHERE oid = m.objid)
          ELSE 'public'::regnamespace
      END <> 'public'::regnamespace;
SELECT count(*) > 100 AS many_refs FROM bloom_refs;
SELECT what, kind, ref, nsp::regnamespace AS schema FROM bloom_refs
WHERE nsp IS NULL OR nsp NOT IN ('pg_catalog'::regnamespace, 'public'::regnamespace);
SELECT o.oprname, o.oprrest, o.oprjoin, o.oprrest::oid = 'pg_catalog.eqsel'::regproc::oid AS catalog_eqsel
FROM pg_operator o WHERE o.oprleft = 'public.bloom'::regtype ORDER BY 1;
SELECT castsource = 'pg_catalog.bytea'::regtype OR casttarget = 'pg_catalog.bytea'::regtype AS catalog_bytea,
       castcontext, castmethod
FROM pg_cast WHERE castsource = 'public.bloom'::regtype OR casttarget = 'public.bloom'::regtype
ORDER BY castsource;
SELECT count(*) AS functions_with_foreign_types
FROM pg_proc p, unnest(p.proargtypes::oid[] || p.prorettype) AS t
WHERE p.proname LIKE 'bloom%' AND p.pronamespace = 'public'::regnamespace
  AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
  AND (SELECT typnamespace FROM pg_type WHERE oid = t) <> 'pg_catalog'::regnamespace
  AND t <> 'public.bloom'::regtype;

-- at call time: a hostile schema first in search_path does not redirect what
-- the aggregates, operators and the hash operator class call
SET ROLE regress_bloom_user;
SET search_path = hostile, public;
SELECT bloom_contains(public.bloom_agg(g), 7) AS agg_ok,
       bloom_contains(public.bloom_agg(g, 100, 0.01), 7) AS sized_agg_ok,
       bloom_contains(public.bloom_union_agg(public.bloom_add(public.bloom_create(10), g)), 7) AS union_agg_ok
FROM generate_series(1, 10) g;
SELECT bloom_contains(a OPERATOR(public.|) b, 2) AS or_ok
FROM (SELECT public.bloom_add(public.bloom_create(10), 1) AS a,
             public.bloom_add(public.bloom_create(10), 2) AS b) s;
SET enable_sort = off;
SELECT count(*) AS distinct_ok
FROM (SELECT DISTINCT public.bloom_add(public.bloom_create(10), g % 2) AS f
      FROM generate_series(1, 10) g) s;
RESET enable_sort;
RESET search_path;
RESET ROLE;

-- what the extension cannot prevent: a role that may create in a schema on
-- the caller's search_path (here public, the extension's own) can add a
-- function of the same name with a concrete key type, and calls with that
-- type resolve to it (an exact match beats anycompatible wherever it is in
-- the path; qualifying the call does not help when both live in one
-- schema).  Hence: no CREATE on the extension's schema, nor on any schema
-- in search_path, for roles you do not trust (PostgreSQL 15 revokes CREATE
-- on public from PUBLIC).
SET ROLE regress_bloom_mallory;
CREATE FUNCTION public.bloom_contains(bloom, inet) RETURNS boolean
LANGUAGE sql AS 'SELECT true';
SET ROLE regress_bloom_user;
SELECT bloom_contains(public.bloom_create(10), '10.0.0.1'::inet) AS captured_inet_call,
       public.bloom_contains(public.bloom_create(10), '10.0.0.1'::inet) AS captured_qualified_call,
       bloom_contains(public.bloom_create(10), 42::bigint) AS bigint_call;
RESET ROLE;
DROP FUNCTION public.bloom_contains(bloom, inet);

--
-- Clean up: the extension as the superuser installed it, the database's
-- owner, the roles and their objects
--
SET client_min_messages = warning;
DROP EXTENSION bloomfilter CASCADE;
RESET client_min_messages;
DROP FUNCTION hostile.bloom_agg_final(text, anycompatible);
DROP FUNCTION hostile.bloom_union(text, text);
DROP SCHEMA hostile;
DROP FUNCTION public.bloom_agg_trans(text, anycompatible);
DROP TYPE public.bytea, public.float8, public.cstring;
DROP DOMAIN public.bigint;
REVOKE CREATE ON SCHEMA public FROM regress_bloom_mallory;
DROP VIEW bloom_refs;
DROP VIEW bloom_members;
ALTER DATABASE :"dbname" OWNER TO :"dbowner";
CREATE EXTENSION bloomfilter;
DROP ROLE regress_bloom_user;
DROP ROLE regress_bloom_owner;
DROP ROLE regress_bloom_mallory;
