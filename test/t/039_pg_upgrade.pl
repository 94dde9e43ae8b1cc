
# Copyright (c) 2026, the bloomfilter developers

# test/t/039_pg_upgrade.pl: pg_upgrade keeps a shared filter's bits (issue
# 39 item 4), and the bloomfilter index and stored bloom values beside it.
#
# A cluster gets a shared filter that grew to several layers (single adds
# and a batch), a stored bloom value and a bloomfilter index; it is stopped
# and pg_upgrade'd (copying, the default mode: PostgreSQL 15's pg_upgrade
# has no --copy option) into a new cluster.  There: every key is found,
# bloom_filter_info and each exported layer's bytes are what they were, and
# adds still work (one that grows the filter again); the index and the
# stored value find their keys.
#
# By default both clusters are of the installation under test (the same
# major version: it proves the storage survives pg_upgrade's copy of the
# files and its dump of the schema).  With BLOOM_UPGRADE_FROM set to the
# install directory of an older PostgreSQL (one holding bin/pg_ctl) that has
# this extension installed, the first cluster is of that version: a real
# upgrade between majors.
use strict;
use warnings;

use File::Temp qw(tempdir);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $from = $ENV{BLOOM_UPGRADE_FROM};
my $old = PostgreSQL::Test::Cluster->new('old',
	$from ? (install_path => $from) : ());
# checksums on in both (18's initdb turns them on, 15-17's off; pg_upgrade
# needs both alike)
$old->init(extra => ['--data-checksums']);
$old->start;
$old->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
SELECT bloom_filter_create('public.seen', 2000, 0.01);
SELECT count(*) FILTER (WHERE bloom_filter_add('seen', g::bigint)) FROM generate_series(1, 500) g;
SELECT bloom_filter_add('seen', array_agg(g::bigint)) FROM generate_series(501, 10000) g;
CREATE TABLE kept (f bloom);
INSERT INTO kept SELECT bloom_agg(g::bigint, 20000, 0.01) FROM generate_series(1, 10000) g;
CREATE TABLE users (id bigint);
INSERT INTO users SELECT g FROM generate_series(1, 10000) g;
CREATE INDEX users_bf ON users USING bloomfilter (id);
});

my $all_found = q{
SELECT bloom_filter_contains('seen', array_agg(g::bigint)) = array_fill(true, ARRAY[10000])
FROM generate_series(1, 10000) g};
my $info = q{SELECT layers, keys, bits_set, size_bytes FROM bloom_filter_info('seen')};
my $export = q{SELECT string_agg(layer || ':' || md5(filter::bytea), ',' ORDER BY layer)
FROM bloom_filter_export('seen')};
my $others = q{
SELECT (SELECT bool_and(bloom_contains(f, g::bigint)) FROM kept, generate_series(1, 10000) g),
       (SELECT bool_and(bloom_index_contains('users_bf', g::bigint)) FROM generate_series(1, 10000) g)};

is($old->safe_psql('postgres', $all_found), 't', 'before: every key found');
my $old_info = $old->safe_psql('postgres', $info);
like($old_info, qr/^[3-9]\|/, "before: the filter grew ($old_info)");
my $old_export = $old->safe_psql('postgres', $export);
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new');
$new->init(extra => ['--data-checksums']);

# pg_upgrade writes its logs in the current directory (15) or in the new
# cluster (16 on): run it in a directory of its own
my $dir = tempdir(CLEANUP => 1);
chdir $dir or die "cannot chdir to $dir: $!";
command_ok(
	[
		'pg_upgrade', '--no-sync',
		'-d', $old->data_dir,
		'-D', $new->data_dir,
		'-b', $old->config_data('--bindir'),
		'-B', $new->config_data('--bindir'),
		'-s', $new->host,
		'-p', $old->port,
		'-P', $new->port
	],
	'pg_upgrade of the cluster with the filter');

$new->start;
is($new->safe_psql('postgres', $all_found), 't',
	'after pg_upgrade: every key found');
is($new->safe_psql('postgres', $info), $old_info,
	'after pg_upgrade: the same layers, keys, bits set and size');
is($new->safe_psql('postgres', $export), $old_export,
	'after pg_upgrade: each exported layer has the same bytes');
is($new->safe_psql('postgres', $others), 't|t',
	'after pg_upgrade: the stored value and the index find every key');
is($new->safe_psql('postgres', q{
SELECT bloom_filter_add('seen', -1::bigint) IS NOT NULL;
SELECT bloom_filter_add('seen', array_agg(g::bigint)) > 29000 FROM generate_series(10001, 40000) g;
SELECT bloom_filter_contains('seen', array_agg(g::bigint)) = array_fill(true, ARRAY[40001])
FROM (SELECT -1 AS g UNION ALL SELECT generate_series(1, 40000)) s}),
	"t\nt\nt", 'after pg_upgrade: adds work, single and batch, and are found');
my $new_info = $new->safe_psql('postgres', $info);
cmp_ok((split /\|/, $new_info)[0], '>', (split /\|/, $old_info)[0],
	"after pg_upgrade: the filter grows again ($new_info)");

$new->stop;
chdir '/';
done_testing();
