--
-- bloom_catalog: the catalog says what the extension is.  The extension's
-- comment (the control file's, what \dx shows) names the index, the
-- planner's pre-check and the type; every function and aggregate of the
-- extension a user calls has a COMMENT (\df+), and so do the type, the
-- access method and the operators.  The functions left without one are the
-- internal support functions DEVELOPER.md lists ("Internal support
-- functions"): each takes or returns internal or cstring, or is the type's
-- binary output function.
--
SELECT comment FROM pg_available_extensions WHERE name = 'bloomfilter';
SELECT obj_description(oid, 'pg_extension') = comment AS catalog_has_it
FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname
WHERE extname = 'bloomfilter';

-- the extension's functions and aggregates
CREATE TEMP VIEW ext_procs AS
SELECT p.oid, p.proname, p.prorettype, p.proargtypes
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  AND d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter');
SELECT count(*) > 50 AS many FROM ext_procs;

-- those without a comment, by name: the internal support functions alone
SELECT DISTINCT proname AS without_comment
FROM ext_procs WHERE obj_description(oid, 'pg_proc') IS NULL
ORDER BY 1;

-- and each of them is internal: an internal or cstring argument or result,
-- or the type's send function (none is callable usefully from SQL)
SELECT oid::regprocedure AS not_internal
FROM ext_procs
WHERE obj_description(oid, 'pg_proc') IS NULL
  AND NOT ('internal'::regtype = ANY (proargtypes::oid[] || prorettype)
		   OR 'cstring'::regtype = ANY (proargtypes::oid[] || prorettype)
		   OR oid = (SELECT typsend FROM pg_type WHERE typname = 'bloom'));

-- every overload a user calls has one: bloom_contains and bloom_agg per key type
SELECT proname, count(*) AS overloads, count(obj_description(oid, 'pg_proc')) AS commented
FROM ext_procs WHERE proname IN ('bloom_contains', 'bloom_agg')
GROUP BY proname ORDER BY proname;

-- the other objects: the type, the access method, the operators
SELECT obj_description('bloom'::regtype, 'pg_type') IS NOT NULL AS type_commented,
	   obj_description((SELECT oid FROM pg_am WHERE amname = 'bloomfilter'), 'pg_am') IS NOT NULL AS am_commented;
SELECT o.oid::regoperator AS operator_without_comment
FROM pg_depend d JOIN pg_operator o ON o.oid = d.objid
WHERE d.classid = 'pg_operator'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter')
  AND obj_description(o.oid, 'pg_operator') IS NULL;
DROP VIEW ext_procs;
