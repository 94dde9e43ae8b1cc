
# Copyright (c) 2026, the bloomfilter developers

# Privileges, end to end, with real logins and databases (the in-database
# checks are in sql/bloom_privileges.sql).
#
# 1. A role that is no superuser creates a database, and in it creates the
#    extension (trusted): the extension is the role's, its objects the
#    bootstrap superuser's.
# 2. That role calls every SQL-callable function of the extension; with
#    track_functions = all the server counts the calls, and every member
#    function that does not take "internal" and is not type I/O must have
#    been called at least once.  The aggregates, both forms, run serially and
#    in parallel (serialize/deserialize).
# 3. It cannot read files, other roles' tables or server memory through the
#    extension, nor change the extension's objects: each attempt is an error
#    and the server stays up.  The library imports no file, process, network
#    or role-switching functions (SPI only for Citus, see test/symbols.sh).
# 4. Hostile names at CREATE EXTENSION: look-alike types and functions in the
#    target schema (planted by a role that may create there), temporary
#    tables named like types, and a search_path with a hostile schema first;
#    the resulting catalog (BloomCatalog::catalog_dump) is that of a clean
#    install by the superuser.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use BloomCatalog;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('priv');
$node->init;
$node->append_conf('postgresql.conf', "track_functions = all\n");
$node->start;

$node->safe_psql('postgres', <<'EOS');
CREATE ROLE alice LOGIN CREATEDB;
CREATE ROLE bob LOGIN;
CREATE ROLE mallory LOGIN;
EOS

# --- 1. alice creates a database and the extension in it -------------------

$node->safe_psql('postgres', 'CREATE DATABASE alicedb', extra_params => [ '-U', 'alice' ]);
sub as_alice
{
	my ($sql, %opts) = @_;
	return $node->safe_psql('alicedb', $sql, extra_params => [ '-U', 'alice' ], %opts);
}
sub try_as
{
	my ($user, $db, $sql) = @_;
	# (VERBOSITY verbose: the error's SQLSTATE, and its DETAIL)
	my ($ret, $out, $err) = $node->psql($db, $sql,
		extra_params => [ '-U', $user, '-v', 'VERBOSITY=verbose' ]);
	return ($ret, $err);
}

is( $node->safe_psql('postgres',
		"SELECT rolsuper FROM pg_roles WHERE rolname = 'alice'"),
	'f', 'alice is no superuser');
is(as_alice('CREATE EXTENSION bloomfilter; SELECT extowner::regrole FROM pg_extension WHERE extname = $$bloomfilter$$'),
	'alice', 'alice creates the extension in her database, and owns it');
is( as_alice(<<'EOS'),
SELECT string_agg(DISTINCT pg_get_userbyid(p.proowner) || ' owns functions', ', ')
FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'bloomfilter'
JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
EOS
	$node->safe_psql('postgres', 'SELECT rolname FROM pg_roles WHERE oid = 10')
	  . ' owns functions',
	'the functions belong to the bootstrap superuser');

# --- 2. every function works for alice ----------------------------------------

as_alice(<<'EOS');
CREATE TABLE keys AS SELECT g AS k, md5(g::text) AS t FROM generate_series(1, 200000) g;
ANALYZE keys;
CREATE TABLE filters AS
SELECT k % 4 AS part, bloom_agg(k, 200000, 0.01) AS f FROM keys GROUP BY 1;
CREATE INDEX keys_k_bf ON keys USING bloomfilter (k);
EOS

my $exercise = <<'EOS';
-- type I/O, casts
SELECT f::text::bloom = f, f::bytea::bloom = f, bloom_send(f) = f::bytea,
       bloom_from_bytea(f::bytea) = f
FROM filters WHERE part = 0;
-- create, add, contains
SELECT bloom_contains(bloom_add(bloom_create(100), 42), 42),
       bloom_contains(bloom_add(bloom_create(100, 0.001), 'x'::text), 'x'::text);
SELECT count(*) FROM keys, filters WHERE part = k % 4 AND NOT bloom_contains(f, k);
-- add with a report
SELECT added FROM bloom_add_new(bloom_create(10), 1);
-- union, intersection, operators, equality, hashing
SELECT bloom_union(a.f, b.f) = (a.f | b.f), bloom_intersect(a.f, b.f) = (a.f & b.f),
       NOT (a.f = b.f), a.f <> b.f, bloom_eq(a.f, a.f), bloom_ne(a.f, b.f),
       bloom_value_hash(a.f) = bloom_value_hash(a.f),
       bloom_value_hash_extended(a.f, 1) = bloom_value_hash_extended(a.f, 1)
FROM filters a, filters b WHERE a.part = 0 AND b.part = 1;
-- inspecting and estimating
SELECT (bloom_info(f)).nbits, round(bloom_cardinality(f)), bloom_false_positive_rate(f) < 0.02
FROM filters WHERE part = 0;
SELECT round(bloom_union_cardinality(a.f, b.f)), round(bloom_intersect_cardinality(a.f, b.f))
FROM filters a, filters b WHERE a.part = 0 AND b.part = 1;
SELECT nbytes FROM bloom_size(1000000);
-- bloom_contains with each key type that has an overload, and another type
SELECT NOT bloom_contains(e, 1::smallint), NOT bloom_contains(e, 1::integer),
       NOT bloom_contains(e, 1::bigint), NOT bloom_contains(e, 'x'::text),
       NOT bloom_contains(e, '\x01'::bytea), NOT bloom_contains(e, gen_random_uuid()),
       NOT bloom_contains(e, true), NOT bloom_contains(e, 1.5::real),
       NOT bloom_contains(e, 1.5::float8), NOT bloom_contains(e, 1.5::numeric),
       NOT bloom_contains(e, '2024-01-01'::date), NOT bloom_contains(e, '2024-01-01'::timestamp),
       NOT bloom_contains(e, '2024-01-01'::timestamptz), NOT bloom_contains(e, '12:00'::time),
       NOT bloom_contains(e, 'x'::"char"), NOT bloom_contains(e, '10.0.0.1'::inet)
FROM (SELECT bloom_create(10) AS e) s;
-- the live-filter index on her table
SELECT bloom_index_contains('keys_k_bf', 7),
       (SELECT count(*) FROM bloom_index_partitions('keys_k_bf', 7)) = 1,
       (SELECT layers >= 1 FROM bloom_index_info('keys_k_bf')),
       (SELECT bloom_contains(filter, 7) FROM bloom_index_filters('keys_k_bf')),
       bloom_index_verify('keys_k_bf') = 0;
-- shared filters without their keys: tables of her own
SELECT bloom_filter_create('seen_t', 1000)::text = 'seen_t',
       bloom_filter_create('seen_i', 1000)::text = 'seen_i';
SELECT bloom_filter_add('seen_t', 'a'), bloom_filter_add('seen_i', 7),
       bloom_filter_add('seen_i', ARRAY[8, 9]) = 2;
SELECT bloom_filter_contains('seen_t', 'a'), bloom_filter_contains('seen_i', 7),
       bloom_filter_contains('seen_i', ARRAY[8]) = '{t}';
SELECT layers = 1 AND keys = 3 FROM bloom_filter_info('seen_i');
SELECT bloom_contains(filter, 9) FROM bloom_filter_export('seen_i');
SELECT bloom_filter_drop('seen_t'), bloom_filter_drop('seen_i');
-- aggregates, serial
SET max_parallel_workers_per_gather = 0;
SELECT bloom_contains(bloom_agg(k), 7), bloom_contains(bloom_agg(k, 200000, 0.01), 7) FROM keys;
SELECT bloom_contains(bloom_union_agg(f), 7), bloom_intersect_agg(f) IS NOT NULL FROM filters;
-- aggregates, parallel: partial states serialized by workers
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT bloom_contains(bloom_agg(k), 7), bloom_contains(bloom_agg(k, 200000, 0.01), 7),
       bloom_contains(bloom_agg(t), md5('7')) FROM keys;
SELECT bloom_contains(bloom_union_agg(f), 7), bloom_intersect_agg(f) IS NOT NULL FROM filters;
EOS
my $out = as_alice($exercise);
unlike($out, qr/(^|\|)f(\||$)/m, 'every check of the exercise is true for alice')
  or diag $out;
like($out, qr/^0$/m, 'no key is missing from its filter');

# which member functions did alice's calls reach?  (stats are flushed when
# her sessions end; force it in case)
as_alice('SELECT pg_stat_force_next_flush()');
my ($callable, $never) = split /\|/, $node->safe_psql('alicedb', <<'EOS'), -1;
SELECT count(*),
       coalesce(string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text)
                FILTER (WHERE NOT EXISTS (SELECT 1 FROM pg_stat_user_functions s
                                          WHERE s.funcid = p.oid AND s.calls > 0)), '')
FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'bloomfilter'
JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND p.prokind = 'f'
  AND NOT 'internal'::regtype = ANY (p.proargtypes)
  AND NOT EXISTS (SELECT 1 FROM pg_type t
                  WHERE p.oid IN (t.typinput, t.typoutput, t.typreceive, t.typsend))
EOS
cmp_ok($callable, '>=', 15, "the extension has $callable SQL-callable functions");
is($never, '', 'alice called every one of them (pg_stat_user_functions)');
my $parallel = as_alice(<<'EOS');
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT bloom_agg(k) FROM keys;
EOS
like($parallel, qr/Partial Aggregate/, 'the parallel plan for alice aggregates partially');

# --- 3. what she cannot do -----------------------------------------------------

$node->safe_psql('alicedb', <<'EOS');
CREATE SCHEMA bobs AUTHORIZATION bob;
CREATE TABLE bobs.secret (k text, f bloom);
ALTER TABLE bobs.secret OWNER TO bob;
INSERT INTO bobs.secret SELECT 'hidden', bloom_add(bloom_create(10), 'hidden'::text);
GRANT USAGE ON SCHEMA bobs TO alice;
EOS

# Each refusal is checked by its SQLSTATE and its message where the
# PostgreSQL versions word it alike; where they do not, by the SQLSTATE and
# what both name (15 says "must be superuser or have privileges of the
# pg_read_server_files role" where 16 and later say "permission denied to
# COPY from a file" with that role in the DETAIL).  Making a value of type
# internal from a literal is refused at parse time before 18 (42846, cannot
# cast unknown to internal), by the type's input function in 18 (0A000,
# cannot accept a value of type internal), and at parse time again in 19
# (by its major: 19beta3 compares below 19).
my $internal_state = $node->pg_version->major == 18 ? '0A000' : '42846';
my @denied = (
	[ "SELECT bloom_agg(k) FROM bobs.secret", '42501', qr/permission denied for table secret/ ],
	[ "SELECT bloom_contains(f, 'hidden'::text) FROM bobs.secret", '42501', qr/permission denied for table secret/ ],
	[ "SELECT pg_read_file('postgresql.conf')", '42501', qr/permission denied for function pg_read_file/ ],
	[ "SELECT pg_read_binary_file('global/pg_control')", '42501', qr/permission denied for function pg_read_binary_file/ ],
	[ "COPY keys FROM '/etc/passwd'", '42501', qr/COPY from a file.*pg_read_server_files|pg_read_server_files.*COPY from a file/s ],
	[ "COPY keys TO '/tmp/bloom_keys'", '42501', qr/COPY to a file.*pg_write_server_files|pg_write_server_files.*COPY to a file/s ],
	[ "SELECT lo_import('/etc/passwd')", '42501', qr/permission denied for function lo_import/ ],
	[ "SELECT bloom_agg_trans(NULL::internal, 1)", $internal_state, qr/internal/ ],
	[ "CREATE AGGREGATE mixed(bloom) (SFUNC = bloom_union_agg_trans, STYPE = internal, FINALFUNC = bloom_agg_final, FINALFUNC_EXTRA)",
	  '42P13', qr/aggregate transition data type cannot be internal/ ],
	[ "CREATE CAST (bytea AS bloom) WITHOUT FUNCTION", '42501', qr/must be owner of type bytea or type bloom/ ],
	[ "ALTER TYPE bloom SET (RECEIVE = bloom_recv)", '42501', qr/must be superuser to alter a type/ ],
	[ "CREATE OR REPLACE FUNCTION bloom_contains(bloom, anycompatible) RETURNS boolean LANGUAGE sql AS 'SELECT true'",
	  '42501', qr/must be owner of function bloom_contains/ ],
	[ "ALTER FUNCTION bloom_create(bigint, float8) SECURITY DEFINER", '42501', qr/must be owner of function bloom_create/ ],
	[ "ALTER FUNCTION bloom_contains(bloom, anycompatible) OWNER TO alice", '42501', qr/must be owner of function bloom_contains/ ],
	[ "ALTER EXTENSION bloomfilter DROP FUNCTION bloom_contains(bloom, anycompatible)",
	  '42501', qr/must be owner of function bloom_contains/ ],
	[ "CREATE FUNCTION evil(bloom) RETURNS int AS '\$libdir/bloomfilter', 'bf_value_hash' LANGUAGE C",
	  '42501', qr/permission denied for language c/ ],
	[ "LOAD 'bloomfilter'", '42501', qr/access to library "bloomfilter" is not allowed/ ],
	# crafted bytes: refused by the validator, never read past the end
	[ "SELECT overlay(bloom_create(1)::bytea PLACING '\\x00ffffff'::bytea FROM 17 FOR 4)::bloom",
	  '22P03', qr/invalid bloom filter/ ],
	[ "SELECT substring(bloom_create(1)::bytea FROM 1 FOR 100)::bloom", '22P03', qr/invalid bloom filter/ ],
	[ "SELECT 'QkxNRgEBAQ=='::bloom", '22P02', qr/invalid bloom filter|invalid input syntax for type bloom/ ],
);
foreach my $case (@denied)
{
	my ($sql, $state, $expect) = @$case;
	my ($ret, $err) = try_as('alice', 'alicedb', $sql);
	isnt($ret, 0, "alice: refused: $sql");
	ok($err =~ /ERROR:  $state: / && $err =~ $expect,
		"alice: the right error ($state) for: $sql")
	  or diag("stderr: $err");
}
is(as_alice('SELECT 1'), '1', 'the server is up and alice can still work');

# the library imports nothing that opens files, runs programs, talks to the
# network or switches roles.  SPI and set_config_option are imported for one
# fixed query on Citus coordinators (src/bfcitus.c, run as the calling user,
# with the key's text made under fixed date and float styles, undone at
# once); test/symbols.sh checks that no other object file calls them.
# FileRead and FileWrite are imported for one file: the temporary file of an
# index's pending keys (src/bfpending.c, made by OpenTemporaryFile, a file of
# the backend's own under pgsql_tmp); test/symbols.sh checks that no other
# object file reads or writes a file.
SKIP:
{
	my $lib = $node->config_data('--pkglibdir') . '/bloomfilter.so';
	my $nm = `nm -D --undefined-only '$lib' 2>/dev/null`;
	skip 'nm is not available', 1 if $? != 0 || $nm eq '';
	my @symbols = map { (split)[-1] =~ s/@.*//r } split /\n/, $nm;
	my @bad = grep {
		/^(open|open64|openat|fopen|fopen64|creat|read|write|pread|pwrite|unlink|rename|
		   mkdir|rmdir|opendir|readdir|stat|lstat|fstat|access|chmod|chown|symlink|link|
		   system|popen|fork|vfork|execve|execv|execvp|execl|dlopen|socket|connect|bind|
		   listen|accept|send|recv|getenv|setenv|
		   AllocateFile|AllocateDir|OpenTransientFile|OpenTransientFilePerm|PathNameOpenFile|
		   BasicOpenFile|pg_file_exists|LoadExternalFunction|
		   OpenPipeStream|SetConfigOption|superuser|SetUserIdAndSecContext)$/x
	} @symbols;
	is(join(' ', @bad), '', "$lib imports no file, process, network or role-switching function");
}

# --- 4. hostile names at CREATE EXTENSION -------------------------------------

# the clean install to compare with, by the superuser
$node->safe_psql('postgres', 'CREATE DATABASE clean');
$node->safe_psql('clean', 'CREATE EXTENSION bloomfilter');
my $clean = BloomCatalog::catalog_dump($node, 'clean');

# alice's own database, where mallory may create in public
$node->safe_psql('postgres', 'CREATE DATABASE hostiledb OWNER alice');
$node->safe_psql('hostiledb', 'GRANT CREATE ON SCHEMA public TO mallory');
my ($ret, $err) = try_as('mallory', 'hostiledb', <<'EOS');
CREATE TYPE public.bytea AS (x int);
CREATE TYPE public.float8 AS (x int);
CREATE TYPE public.boolean AS (x int);
CREATE TYPE public.cstring AS (x int);
CREATE DOMAIN public.bigint AS text;
CREATE DOMAIN public.integer AS text;
CREATE FUNCTION public.bloom_agg_trans(text, anycompatible) RETURNS text
	LANGUAGE sql AS 'SELECT ''mallory''';
CREATE FUNCTION public.bloom_contains(text, anycompatible) RETURNS boolean
	LANGUAGE sql AS 'SELECT true';
EOS
is($ret, 0, 'mallory plants look-alike types and functions in public') or diag $err;
($ret, $err) = try_as('mallory', 'hostiledb',
	'CREATE FUNCTION public.eqsel(internal, oid, internal, integer) RETURNS float8 LANGUAGE sql AS $$SELECT 0.5$$');
like($err, qr/SQL functions cannot have arguments of type internal/,
	'mallory cannot make a look-alike selectivity function at all');

my $installed = $node->safe_psql(
	'hostiledb', <<'EOS',
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.bloom_union(text, text) RETURNS text LANGUAGE sql AS 'SELECT ''hostile''';
CREATE TYPE hostile.bytea AS (x int);
CREATE TEMP TABLE boolean (x int);
CREATE TEMP TABLE internal (x int);
CREATE TEMP TABLE anycompatible (x int);
CREATE TEMP TABLE cstring (x int);
SET search_path = hostile, pg_temp, pg_catalog, public;
CREATE EXTENSION bloomfilter SCHEMA public;
SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter';
EOS
	extra_params => [ '-U', 'alice' ]);
isnt($installed, '', 'alice installs the extension with a hostile search_path and temporary look-alikes');
is(BloomCatalog::diff_lines($clean, BloomCatalog::catalog_dump($node, 'hostiledb')),
	'', 'the hostile install has exactly the catalog of a clean install');

# mallory's look-alikes did not become part of it, and do not capture calls
# that name the extension's own signatures
is( $node->safe_psql('hostiledb', <<'EOS', extra_params => [ '-U', 'bob' ]),
SELECT bloom_contains(public.bloom_agg(g), 7)::text || ' ' ||
       bloom_contains(public.bloom_agg(g), 1000)::text
FROM generate_series(1, 10) g
EOS
	'true false',
	'the aggregates of the hostile install work for another role');

# --- alice drops and recreates it -------------------------------------------

($ret, $err) = try_as('alice', 'alicedb', 'DROP TABLE filters; DROP INDEX keys_k_bf; DROP EXTENSION bloomfilter');
like($err, qr/cannot drop extension bloomfilter because other objects depend on it/,
	"alice cannot drop the extension from under bob's table");
$node->safe_psql('alicedb', 'DROP SCHEMA bobs CASCADE');
as_alice('DROP EXTENSION bloomfilter');
is(as_alice("SELECT count(*) FROM pg_extension WHERE extname = 'bloomfilter'"),
	'0', 'alice drops the extension');
as_alice('CREATE EXTENSION bloomfilter');
is(BloomCatalog::diff_lines($clean, BloomCatalog::catalog_dump($node, 'alicedb')),
	'', "alice's own install has exactly the catalog of a clean install");

$node->stop;
done_testing();
