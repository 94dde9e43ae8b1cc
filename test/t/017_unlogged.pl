
# Copyright (c) 2026, the bloomfilter developers

# A bloomfilter index on an unlogged table keeps taking writes after a crash
# and on a promoted standby.
#
# What a crash or a promotion does to an unlogged table: its main fork is
# thrown away and replaced by its init fork.  The init fork of the index (a
# metapage with no layer, bfbuildempty) must therefore reach the disk and the
# standby: it is WAL-logged and synced, as the core access methods do.  The
# index here is created after the last checkpoint, so that nothing but its
# own WAL and sync keeps its init fork: a crash then leaves the init fork
# whole (not a page of zeros), the first insert after the reset adds a
# layer, and every key inserted after the crash is found.  The standby,
# which received the init fork only through WAL, is promoted, and takes
# inserts the same way.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('unlogged_primary');
$primary->init(allows_streaming => 1);
# no checkpoint and no background writer: nothing writes the init fork's
# buffer but the index's own code
$primary->append_conf(
	'postgresql.conf', q{
checkpoint_timeout = 1h
bgwriter_lru_maxpages = 0
});
$primary->start;
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('unlogged_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomfilter;
CHECKPOINT;
CREATE UNLOGGED TABLE u (k int);
CREATE INDEX u_bf ON u USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO u SELECT generate_series(1, 5000);
});
is($primary->safe_psql('postgres', q{SELECT layers > 1 FROM bloom_index_info('u_bf')}),
	't', 'the unlogged index grew before the crash');
$primary->wait_for_catchup($standby);

# no checkpoint since the index was created: only its WAL and sync keep the
# init fork
$primary->stop('immediate');
$primary->start;

is($primary->safe_psql('postgres', 'SELECT count(*) FROM u'),
	'0', 'after the crash the unlogged table is empty');
my $init_path = $primary->data_dir . '/'
  . $primary->safe_psql('postgres', q{SELECT pg_relation_filepath('u_bf')}) . '_init';
ok(-s $init_path == 8192, 'the init fork is one page');
open(my $fh, '<', $init_path) or die "cannot open $init_path: $!";
binmode $fh;
read($fh, my $page, 8192);
close $fh;
ok($page =~ /[^\0]/, 'the init fork is not a page of zeros');

my ($ret, $out, $err) = $primary->psql('postgres',
	q{INSERT INTO u SELECT generate_series(100001, 103000)});
is($ret, 0, 'inserts go on after the crash');
is($err, '', 'with no error') or diag($err);
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('u_bf', g)) FROM generate_series(100001, 103000) g}),
	'0', 'every key inserted after the crash is found');
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('u_bf')}),
	'0', 'verify after the crash: 0 missing');
is($primary->safe_psql('postgres', q{SELECT layers > 1 FROM bloom_index_info('u_bf')}),
	't', 'and the index grows again');

# the standby got the init fork through WAL only
$standby->promote;
($ret, $out, $err) = $standby->psql('postgres',
	q{INSERT INTO u SELECT generate_series(200001, 201000)});
is($ret, 0, 'the promoted standby takes inserts into the unlogged table');
is($err, '', 'with no error') or diag($err);
is( $standby->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE NOT bloom_index_contains('u_bf', g)) FROM generate_series(200001, 201000) g}),
	'0', 'every key inserted on the promoted standby is found');
is($standby->safe_psql('postgres', q{SELECT bloom_index_verify('u_bf')}),
	'0', 'verify on the promoted standby: 0 missing');

$standby->stop;
$primary->stop;
done_testing();
