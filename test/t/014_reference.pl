
# Copyright (c) 2026, the bloomfilter developers

# The extension and an independent implementation of the format check each
# other.
#
# test/reference/bloomref.py implements the format (src/bloom.h) and the key
# canonicalisation (README.md, "Hashing") in Python, written from their
# description.  For every key family with canonical bytes, PostgreSQL builds
# filters from sample keys three ways (the unsized bloom_agg, the sized
# bloom_agg, bloom_create followed by bloom_add per key); Python parses the
# keys as PostgreSQL prints them and builds the same three.  Then:
#
#   - the filters must be byte for byte the same;
#   - Python probes PostgreSQL's filters for every key and some absent ones
#     and must answer as bloom_contains does;
#   - PostgreSQL probes Python's filters (read through bloom's text input)
#     and must answer as on its own.
#
# Also: bloom_create's sizing for a range of capacities and rates; the
# validation of corrupted filters (both must refuse the same literals); and
# filters of generic key types, whose keys go through PostgreSQL's own hash
# functions and cannot be reproduced outside PostgreSQL: those are only read,
# and their family must carry the major version (the Python refuses to probe
# them).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);
use Cwd qw(abs_path);
use JSON::PP;
use MIME::Base64 qw(encode_base64 decode_base64);

my $refdir = abs_path(dirname(__FILE__) . '/../reference');
# Debian's python3 (with python3-xxhash, see test/deps.sh) unless told
my $python = $ENV{PYTHON}
  // (-x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3');

my $node = PostgreSQL::Test::Cluster->new('reference');
$node->init;
$node->append_conf('postgresql.conf', 'log_statement = none');
$node->start;
$node->safe_psql('postgres',
	q{CREATE DATABASE reference TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'});

# keys are printed with these settings, which the Python parser expects
my $settings = q{SET timezone = 'UTC'; SET datestyle = 'ISO, YMD';
SET extra_float_digits = 1; SET bytea_output = 'hex';};

$node->safe_psql(
	'reference', q{
CREATE EXTENSION bloomfilter;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy', 'très content', 'meh');
CREATE SCHEMA "Ref Schema";
CREATE TYPE "Ref Schema"."Mood" AS ENUM ('a b', 'ü', 'Z');
CREATE DOMAIN posint AS integer CHECK (VALUE > 0);
CREATE DOMAIN short_text AS text;
-- bloom_create, then bloom_add of each key in order
CREATE FUNCTION ref_fold(c bigint, p float8, keys anyarray) RETURNS bloom
LANGUAGE plpgsql AS $$
DECLARE
    f bloom := bloom_create(c, p);
BEGIN
    FOR i IN 1 .. coalesce(array_length(keys, 1), 0) LOOP
        f := bloom_add(f, keys[i]);
    END LOOP;
    RETURN f;
END
$$;
CREATE FUNCTION ref_valid(t text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM t::bloom;
    RETURN 'valid';
EXCEPTION WHEN invalid_text_representation THEN
    RETURN 'invalid';
END
$$;
CREATE TABLE ref_pg (name text, kind text, f bloom);
CREATE TABLE ref_py (name text, kind text, f bloom);
});

my $major = $node->safe_psql('reference',
	q{SELECT current_setting('server_version_num')::int / 10000});

# name, SQL type, type for bloomref, capacity, rate, present and absent keys
# (SQL expressions, or one SELECT giving them)
my @cases = (
	{   name => 'smallint', sqltype => 'smallint', type => 'smallint',
		cap => 10, rate => 0.01,
		keys => [qw(-32768 32767 0 -1 42 1)],
		absent => [qw(2 -2 43 1000 -32767)] },
	{   name => 'integer', sqltype => 'integer', type => 'integer',
		cap => 1000, rate => 0.01,
		keys => [qw(-2147483648 2147483647 0 42 65536 -1)],
		absent => [qw(2147483646 7 -7 32768)] },
	{   name => 'bigint', sqltype => 'bigint', type => 'bigint',
		cap => 1000, rate => 0.01,
		keys => [qw(-9223372036854775808 9223372036854775807 0 42 4294967296 -1)],
		absent => [qw(9223372036854775806 -4294967296 2147483648)] },
	{   name => 'bigint 1..20000', sqltype => 'bigint', type => 'bigint',
		cap => 20000, rate => 0.01,
		keys => 'SELECT g FROM generate_series(1, 20000) g',
		absent => 'SELECT g FROM generate_series(20001, 22000) g' },
	{   name => 'domain over integer', sqltype => 'posint', type => 'integer',
		cap => 3, rate => 0.05,
		keys => [qw(1 2 3 2147483647)], absent => [qw(4 5)] },
	{   name => 'text', sqltype => 'text', type => 'text',
		cap => 5, rate => 0.001,
		keys => [
			q{''}, q{'a'}, q{'A'}, q{'héllo'}, q{'日本語'}, q{'😀'},
			q{'trailing  '}, q{E'tab\there'}, q{E'line\nbreak'},
			q{repeat('x', 10000)}, q{repeat('ab', 50000)}, q{repeat('é', 3000)}
		],
		absent => [
			q{' '}, q{'b'}, q{'hello'}, q{'trailing'}, q{repeat('x', 9999)},
			q{'HÉLLO'}
		] },
	{   name => 'varchar', sqltype => 'varchar', type => 'varchar',
		cap => 1000, rate => 0.01,
		keys => [q{''}, q{'abc'}, q{'ü'}, q{repeat('v', 5000)}],
		absent => [q{'abcd'}, q{'u'}] },
	{   name => 'name', sqltype => 'name', type => 'name',
		cap => 1000, rate => 0.01,
		keys => [q{''}, q{'abc'}, q{repeat('n', 100)}, q{repeat('é', 40)}],
		absent => [q{'abd'}, q{repeat('n', 62)}, q{repeat('é', 30)}] },
	{   name => 'char(5)', sqltype => 'char(5)', type => 'char',
		cap => 1000, rate => 0.01,
		keys => [q{'ab'}, q{''}, q{'abcde'}, q{'  x'}, q{'é'}, q{'ab   '}],
		absent => [q{'abc'}, q{' x'}, q{'abcd'}, q{'e'}] },
	{   name => 'char(300)', sqltype => 'char(300)', type => 'char',
		cap => 1000, rate => 0.01,
		keys => [q{'x'}, q{repeat('y', 300)}, q{repeat('ö', 299)}],
		absent => [q{'y'}, q{repeat('y', 299)}] },
	{   name => 'domain over text', sqltype => 'short_text', type => 'text',
		cap => 1000, rate => 0.01,
		keys => [q{'x'}, q{'y'}], absent => [q{'z'}] },
	{   name => 'bytea', sqltype => 'bytea', type => 'bytea',
		cap => 1000, rate => 0.01,
		keys => [
			q{'\x'}, q{'\x00'}, q{'\x0000'}, q{'\xdeadbeef'},
			q{decode(repeat('ff', 3000), 'hex')}, q{convert_to('héllo', 'UTF8')}
		],
		absent => [q{'\x01'}, q{'\xdeadbe'}, q{'\x000000'}] },
	{   name => 'uuid', sqltype => 'uuid', type => 'uuid',
		cap => 1000, rate => 0.01,
		keys => [
			q{'00000000-0000-0000-0000-000000000000'},
			q{'ffffffff-ffff-ffff-ffff-ffffffffffff'},
			q{'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'},
			q{'{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A12}'}
		],
		absent => [
			q{'00000000-0000-0000-0000-000000000001'},
			q{'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a13'}
		] },
	{   name => 'boolean', sqltype => 'boolean', type => 'boolean',
		cap => 2, rate => 0.01,
		keys => [qw(true false)], absent => [] },
	{   name => 'boolean, true only', sqltype => 'boolean', type => 'boolean',
		cap => 1, rate => 0.5,
		keys => [qw(true)], absent => [qw(false)] },
	{   name => 'real', sqltype => 'real', type => 'real',
		cap => 1000, rate => 0.01,
		keys => [
			q{0}, q{'-0'}, q{1.5}, q{'NaN'}, q{'Infinity'}, q{'-Infinity'},
			q{'1e-45'}, q{'3.4028235e38'}, q{0.1}, q{-2.5}, q{'1.17549435e-38'}
		],
		absent => [q{0.2}, q{'1e-44'}, q{2.5}, q{'-1.5'}] },
	{   name => 'double precision', sqltype => 'double precision',
		type => 'double precision', cap => 1000, rate => 0.01,
		keys => [
			q{0}, q{'-0'}, q{'NaN'}, q{'Infinity'}, q{'-Infinity'},
			q{'5e-324'}, q{'1.7976931348623157e308'}, q{0.1}, q{-2.5},
			q{0.1::real}, q{'-NaN'}
		],
		absent => [q{0.2}, q{'1e-300'}, q{1.5}, q{0.30000000000000004}] },
	{   name => 'numeric', sqltype => 'numeric', type => 'numeric',
		cap => 5000, rate => 0.0001,
		keys => [
			q{1.0}, q{1.00}, q{0}, q{'-0.00'}, q{'NaN'},
			q{123456789012345678901234567890.123456789000},
			q{'-1e-20'}, q{'1e100'}, q{'Infinity'}, q{'-Infinity'}, q{10},
			q{100.500}, q{'0.000'}
		],
		absent => [q{1.1}, q{'1e-20'}, q{2}, q{1000}, q{100.05}] },
	{   name => 'date', sqltype => 'date', type => 'date',
		cap => 1000, rate => 0.01,
		keys => [
			q{'2000-01-01'}, q{'1999-12-31'}, q{'0001-01-01'}, q{'9999-12-31'},
			q{'infinity'}, q{'-infinity'}, q{'1970-01-01'}, q{'2024-02-29'}
		],
		absent => [q{'2000-01-02'}, q{'2024-03-01'}, q{'0001-01-02'}] },
	{   name => 'timestamp', sqltype => 'timestamp', type => 'timestamp',
		cap => 1000, rate => 0.01,
		keys => [
			q{'2000-01-01 00:00:00'}, q{'1999-12-31 23:59:59.999999'},
			q{'0001-01-01 00:00:00'}, q{'9999-12-31 23:59:59.999999'},
			q{'infinity'}, q{'-infinity'}, q{'1970-01-01'},
			q{'2024-02-29 12:34:56.789'}
		],
		absent => [q{'2000-01-01 00:00:00.000001'}, q{'2024-02-29 12:34:56'}] },
	{   name => 'timestamptz', sqltype => 'timestamptz', type => 'timestamptz',
		cap => 200, rate => 0.2,
		keys => [
			q{'2000-01-01 00:00:00+00'}, q{'2024-03-10 12:00:00-08'},
			q{'2024-03-10 20:00:00+00'}, q{'1999-12-31 23:59:59.999999+00'},
			q{'infinity'}, q{'-infinity'}, q{'0001-01-01 00:00:00+00'},
			q{'2024-06-01 12:00:00+05:30'}
		],
		absent => [q{'2024-03-10 12:00:00+00'}, q{'2000-01-01 00:00:00+01'}] },
	{   name => 'time', sqltype => 'time', type => 'time',
		cap => 1000, rate => 0.01,
		keys => [
			q{'00:00'}, q{'23:59:59.999999'}, q{'24:00:00'}, q{'12:34:56.789'},
			q{'00:00:00.000001'}
		],
		absent => [q{'12:34:56'}, q{'23:59:59'}] },
	{   name => 'enum', sqltype => 'mood', type => 'enum',
		schema => 'public', typename => 'mood',
		labels => [ 'sad', 'ok', 'happy', 'très content', 'meh' ],
		family_of => q{'sad'::mood},
		cap => 1000, rate => 0.01,
		keys => [q{'sad'}, q{'happy'}, q{'très content'}],
		absent => [q{'ok'}, q{'meh'}] },
	{   name => 'enum, quoted name', sqltype => '"Ref Schema"."Mood"',
		type => 'enum', schema => 'Ref Schema', typename => 'Mood',
		labels => [ 'a b', 'ü', 'Z' ],
		family_of => q{'a b'::"Ref Schema"."Mood"},
		cap => 1000, rate => 0.01,
		keys => [q{'a b'}, q{'ü'}], absent => [q{'Z'}] },);

# the family PostgreSQL records for each case
my %family = (
	smallint => 'integer', integer => 'integer', bigint => 'integer',
	text => 'text', varchar => 'text', name => 'text', char => 'text',
	bytea => 'bytea', uuid => 'uuid', boolean => 'boolean',
	real => 'float', 'double precision' => 'float', numeric => 'numeric',
	date => 'date', timestamp => 'timestamp', timestamptz => 'timestamptz',
	time => 'time');

sub key_select
{
	my ($sqltype, $keys) = @_;
	return $keys unless ref $keys;
	return "SELECT NULL::$sqltype WHERE false" unless @$keys;
	return 'VALUES ' . join(', ', map { "(($_)::$sqltype)" } @$keys);
}

# --- PostgreSQL builds and probes its filters ---
my @spec_cases;
my $i = 0;
foreach my $c (@cases)
{
	$i++;
	my $t = "ref_$i";
	my $name = $node->safe_psql('reference', 'SELECT quote_literal($$' . $c->{name} . '$$)');
	$node->safe_psql(
		'reference', qq{
CREATE TABLE $t (ord int GENERATED ALWAYS AS IDENTITY, k $c->{sqltype}, present bool);
INSERT INTO $t (k, present) SELECT x, true FROM (@{[key_select($c->{sqltype}, $c->{keys})]}) s(x);
INSERT INTO $t (k, present) SELECT x, false FROM (@{[key_select($c->{sqltype}, $c->{absent})]}) s(x);
INSERT INTO ref_pg SELECT $name, 'agg', bloom_agg(k) FROM $t WHERE present;
INSERT INTO ref_pg SELECT $name, 'sized', bloom_agg(k, $c->{cap}, $c->{rate}) FROM $t WHERE present;
INSERT INTO ref_pg SELECT $name, 'fold', ref_fold($c->{cap}, $c->{rate}, array_agg(k ORDER BY ord)) FROM $t WHERE present;
});
	my $printed = sub {
		my ($present) = @_;
		return decode_json(
			$node->safe_psql(
				'reference', qq{$settings
SELECT coalesce(json_agg(encode(convert_to(format('%s', k), 'UTF8'), 'hex') ORDER BY ord), '[]')
FROM $t WHERE present = $present}));
	};
	my %filters = split /\|/, join '|',
	  split /\n/, $node->safe_psql('reference',
		"SELECT kind, f FROM ref_pg WHERE name = $name ORDER BY kind");
	$c->{table} = $t;
	$c->{qname} = $name;
	push @spec_cases,
	  {
		name => $c->{name},
		type => $c->{type},
		(defined $c->{schema}
			? (schema => $c->{schema}, typename => $c->{typename},
				labels => [ map { unpack('H*', $_) } @{ $c->{labels} } ])
			: ()),
		capacity => $c->{cap},
		rate => $c->{rate},
		keys => $printed->('true'),
		absent => $printed->('false'),
		filters => \%filters,
	  };
}

# --- bloom_create's sizing ---
my @sizes = (
	[ 1, 0.01 ], [ 2, 0.5 ], [ 10, 0.1 ], [ 1000, 0.01 ], [ 12345, 0.001 ],
	[ 100000, 0.0001 ], [ 1000000, 0.01 ], [ 100, 1e-6 ], [ 7, 0.999 ],
	[ 3, 1e-12 ], [ 50000, 0.3 ], [ 999, 0.0123 ]);
my @size_filters = map {
	$node->safe_psql('reference', "SELECT bloom_create($_->[0], $_->[1])")
} @sizes;

# --- literals to validate: a good filter, corrupted field by field ---
my $good = decode_base64(
	$node->safe_psql('reference',
		q{SELECT bloom_add(bloom_create(10, 0.01), 'x'::text)}));
sub patched
{
	my ($off, $bytes) = @_;
	my $b = $good;
	substr($b, $off, length $bytes) = $bytes;
	return $b;
}
my $nblocks = unpack('Q<', substr($good, 16, 8));
my @corrupt = (
	[ 'unchanged', $good ],
	[ 'magic', patched(0, 'BLMX') ],
	[ 'version 2', patched(4, "\x02") ],
	[ 'version 0', patched(4, "\x00") ],
	[ 'layout 2', patched(5, "\x02") ],
	[ 'hash scheme 2', patched(6, "\x02") ],
	[ 'nhashes 0', patched(7, "\x00") ],
	[ 'nhashes 32', patched(7, "\x20") ],
	[ 'nhashes 33', patched(7, "\x21") ],
	[ 'seed 1', patched(8, pack('Q<', 1)) ],
	[ 'nblocks 0', patched(16, pack('Q<', 0)) ],
	[ 'nblocks + 1', patched(16, pack('Q<', $nblocks + 1)) ],
	[ 'nblocks 2^63', patched(16, pack('Q<', 2**63)) ],
	[ 'capacity 0', patched(24, pack('Q<', 0)) ],
	[ 'capacity 2^63-1', patched(24, pack('Q<', 9223372036854775807)) ],
	[ 'capacity 2^63', patched(24, pack('Q<', 9223372036854775808)) ],
	[ 'rate 0', patched(32, pack('d<', 0)) ],
	[ 'rate 1', patched(32, pack('d<', 1)) ],
	[ 'rate -0.5', patched(32, pack('d<', -0.5)) ],
	[ 'rate NaN', patched(32, ("\x00" x 6) . "\xf8\x7f") ],
	[ 'rate 1e-300', patched(32, pack('d<', 1e-300)) ],
	[ 'flags 1', patched(40, "\x01") ],
	[ 'flags high byte', patched(43, "\x80") ],
	[ 'reserved first', patched(108, "\x01") ],
	[ 'reserved last', patched(123, "\x01") ],
	[ 'family empty', patched(44, "\x00" x 64) ],
	[ 'family multibyte', patched(44, "\xc3\xa9t\xc3\xa9\x00") ],
	[ 'family 63 bytes', patched(44, ('a' x 63) . "\x00") ],
	[ 'family 64 bytes', patched(44, 'a' x 64) ],
	[ 'family bad UTF-8', patched(44, "\xff\x00") ],
	[ 'family overlong UTF-8', patched(44, "\xc0\xaf\x00") ],
	[ 'family surrogate', patched(44, "\xed\xa0\x80\x00") ],
	[ 'family control', patched(44, "a\x01b\x00") ],
	[ 'family DEL', patched(44, "a\x7f\x00") ],
	[ 'family not padded', patched(44, "ab\x00c") ],
	[ 'truncated header', substr($good, 0, 123) ],
	[ 'one byte short', substr($good, 0, length($good) - 1) ],
	[ 'one byte long', $good . "\x00" ],);
# an enum filter: its label guard (bytes 108 to 119) may hold anything but a
# sum for no labels; the bytes after it stay reserved
my $good_enum = decode_base64(
	$node->safe_psql('reference',
		q{SELECT bloom_add(bloom_create(10, 0.01), 'ok'::mood)}));
sub patched_enum
{
	my ($off, $bytes) = @_;
	my $b = $good_enum;
	substr($b, $off, length $bytes) = $bytes;
	return $b;
}
push @corrupt,
  [ 'enum unchanged', $good_enum ],
  [ 'enum guard of other labels', patched_enum(108, pack('L<Q<', 7, 12345)) ],
  [ 'enum guard of no labels', patched_enum(108, pack('L<Q<', 0, 0)) ],
  [ 'enum guard of no labels but a sum', patched_enum(108, pack('L<Q<', 0, 1)) ],
  [ 'enum reserved after the guard', patched_enum(120, "\x01") ],
  [ 'guard of a family of no enum', patched(112, "\x01") ];
my @literals = map { [ $_->[0], encode_base64($_->[1], '') ] } @corrupt;
my $good64 = encode_base64($good, '');
# base64 forms: each value has exactly one text form
push @literals, [ 'base64 without padding', $good64 =~ s/=+$//r ],
  [ 'base64 with a stray character', '*' . substr($good64, 1) ],
  [ 'base64 with a line break', substr($good64, 0, 76) . "\n" . substr($good64, 76) ],
  [ 'base64 with = inside', substr($good64, 0, 4) . '====' . substr($good64, 8) ];
# nonzero bits in the padding: set the lowest (unused) bit of the last
# character before the '='
isnt(length($good) % 3, 0, 'the good filter ends in a padded base64 group');
my $b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
my $last = length($good64 =~ s/=+$//r) - 1;
my $dirty = $good64;
substr($dirty, $last, 1) =
  substr($b64, index($b64, substr($good64, $last, 1)) | 1, 1);
push @literals, [ 'base64 with padding bits set', $dirty ];

my @pg_validity = map {
	$node->safe_psql('reference', 'SELECT ref_valid(' . quote_lit($_->[1]) . ')')
} @literals;

sub quote_lit
{
	my ($s) = @_;
	$s =~ s/'/''/g;
	return "'$s'";
}

# --- generic types: read only ---
my @generic = (
	[ 'interval', q{'1 day'::interval}, "interval/pg$major" ],
	[ 'inet', q{'10.0.0.1'::inet}, "pg_catalog.inet/pg$major" ],
	[ 'int4range', q{'[1,2)'::int4range}, "pg_catalog.int4range/pg$major" ],
	[ 'integer[]', q{ARRAY[1, 2]}, "integer[]/pg$major" ],
	[ '"char"', q{'a'::"char"}, qq{pg_catalog."char"/pg$major} ],
	[ 'oid', q{'1'::oid}, "pg_catalog.oid/pg$major" ],);
my @generic_filters = map {
	$node->safe_psql('reference', "SELECT bloom_agg(x) FROM (VALUES ($_->[1])) v(x)")
} @generic;

# --- run the Python side ---
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $spec = {
	cases => \@spec_cases,
	sizes => [ map { { capacity => $_->[0], rate => $_->[1] } } @sizes ],
	literals => [ map { $_->[1] } @literals ],
	generic => [
		map { { filter => $generic_filters[$_], family => $generic[$_][2] } }
		  0 .. $#generic
	],
};
open(my $fh, '>:raw', "$tmp/in.json") or die "$tmp/in.json: $!";
print $fh JSON::PP->new->canonical->utf8->encode($spec);
close $fh;
my ($stdout, $stderr);
my $ok = IPC::Run::run([ $python, "$refdir/crosscheck.py", "$tmp/in.json", "$tmp/out.json" ],
	'>', \$stdout, '2>', \$stderr);
ok($ok, "$python test/reference/crosscheck.py runs") or diag($stderr);
BAIL_OUT("the Python side failed: $stderr") unless $ok;
open($fh, '<:raw', "$tmp/out.json") or die "$tmp/out.json: $!";
my $res = decode_json(do { local $/; <$fh> });
close $fh;

# --- compare ---
foreach my $c (@cases)
{
	my $name = $c->{name};
	my $py = $res->{cases}{$name};
	my $sc = (grep { $_->{name} eq $name } @spec_cases)[0];
	my $nkeys = scalar @{ $sc->{keys} };
	# an enum's family ("enum:" and its name) as PostgreSQL records it; the
	# Python side computes it, and the label guard of the filters compared
	# below, from the name and the labels alone
	my $expected_family = defined $c->{family_of}
	  ? $node->safe_psql('reference',
		"SELECT (bloom_info(bloom_add(bloom_create(1), $c->{family_of}))).key_family")
	  : $family{ $c->{type} };
	like($expected_family, qr/^enum:/, "$name: the family is \"enum:\" and the type's name")
	  if defined $c->{family_of};

	is($py->{error}, undef, "$name: the Python side raised no error");
	is($py->{family}, $expected_family, "$name: Python's family is $expected_family");
	foreach my $kind (qw(agg sized fold))
	{
		my $pgf = $sc->{filters}{$kind};
		is($py->{filters}{$kind}, $pgf, "$name, $kind: byte-identical filters");
	}

	# PostgreSQL's answers on its own filters, then on Python's
	foreach my $kind (qw(agg sized fold))
	{
		my $pg_own = decode_json(
			$node->safe_psql(
				'reference', qq{
SELECT json_agg(bloom_contains(f, k) ORDER BY NOT present, ord)
FROM $c->{table}, ref_pg WHERE name = $c->{qname} AND kind = '$kind'}));
		is_deeply($py->{probe_pg}{$kind}, $pg_own,
			"$name, $kind: Python probing PostgreSQL's filter answers as bloom_contains");
		is_deeply([ @{$pg_own}[ 0 .. $nkeys - 1 ] ], [ (JSON::PP::true) x $nkeys ],
			"$name, $kind: every key found");

		if (!defined $py->{filters}{$kind})
		{
			fail("$name, $kind: PostgreSQL probing Python's filter (there is none)");
			next;
		}
		my ($ret, $stdout, $stderr) = $node->psql('reference',
			    "INSERT INTO ref_py VALUES ($c->{qname}, '$kind', "
			  . quote_lit($py->{filters}{$kind})
			  . ')');
		if ($ret != 0)
		{
			fail("$name, $kind: PostgreSQL reads Python's filter: $stderr");
			next;
		}
		my $pg_on_py = decode_json(
			$node->safe_psql(
				'reference', qq{
SELECT json_agg(bloom_contains(f, k) ORDER BY NOT present, ord)
FROM $c->{table}, ref_py WHERE name = $c->{qname} AND kind = '$kind'}));
		is_deeply($pg_on_py, $pg_own,
			"$name, $kind: bloom_contains on Python's filter answers as on its own");
	}
}
is(scalar(keys %{ $res->{cases} }), scalar(@cases), 'Python checked every case');

for my $j (0 .. $#sizes)
{
	is($res->{sizes}[$j], $size_filters[$j],
		"bloom_create($sizes[$j][0], $sizes[$j][1]): byte-identical");
}

for my $j (0 .. $#literals)
{
	is($res->{validity}[$j], $pg_validity[$j],
		"literal '$literals[$j][0]': both say $pg_validity[$j]");
}
# and what the format says of each (bloom.h): only these are valid
my %valid = map { $_ => 1 } ('unchanged', 'nhashes 32', 'seed 1',
	'capacity 2^63-1', 'rate 1e-300', 'family empty', 'family multibyte',
	'family 63 bytes', 'enum unchanged', 'enum guard of other labels',
	'enum guard of no labels');
is( join(', ', map { $_->[0] } grep { $valid{ $_->[0] } } @literals),
	join(', ',
		map { $literals[$_][0] } grep { $pg_validity[$_] eq 'valid' } 0 .. $#literals),
	'PostgreSQL accepts exactly the literals the format allows');

for my $j (0 .. $#generic)
{
	my $g = $res->{generic}[$j];
	is($g->{family}, $generic[$j][2],
		"$generic[$j][0]: the family records the major version ($generic[$j][2])");
	ok($g->{refused}, "$generic[$j][0]: the Python refuses to probe it (not reproducible)");
}

$node->stop;
done_testing();
