
# Copyright (c) 2026, the bloomfilter developers

# test/t/038_shared_concurrency.pl: a shared filter (bloom_filter_*, issue
# 39) under pgbench, many sessions adding at once past its capacity.
#
#   - 8 clients of batch adds of 2,000 keys into a filter of capacity 2,000
#     (each batch fills a layer, most grow the filter): no transaction fails
#     (before, some deadlocked, 40P01: a batch held the head row while it
#     locked the slices of a layer another batch had added, or the head row
#     a lost first add had locked), every key of every committed batch is
#     found, and the false positive rate measured on absent keys is within
#     1.5 x the requested 1 % (concurrent batches that each read the layer's
#     count before waiting for the other's slices used to overfill layers:
#     9.2 % measured);
#   - batch adds beside single adds on a fresh filter: no transaction fails,
#     every key found.
#
# pgbench counts a deadlock as a failed transaction (PostgreSQL 15 on) and
# goes on; the tests require none.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('main');
$node->init;
$node->append_conf('postgresql.conf',
	"log_statement = none\nlog_lock_waits = on\nmax_connections = 30\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
SELECT bloom_filter_create('cd', 2000, 0.01);
SELECT bloom_filter_create('mixed', 2000, 0.01);
CREATE SEQUENCE batch_id;
CREATE TABLE batches (filter text, id bigint);
CREATE TABLE singles (k bigint);
});

# a batch's id is kept in the transaction that adds its keys: a batch that
# failed leaves no id
sub batch
{
	my ($f) = @_;
	return qq{
BEGIN;
INSERT INTO batches SELECT '$f', nextval('batch_id') RETURNING id \\gset
SELECT bloom_filter_add('$f', array(SELECT :id::bigint * 10000 + i FROM generate_series(1, 2000) i));
COMMIT;
};
}
my $single = q{
\set k random(1, 1000000000)
BEGIN;
INSERT INTO singles VALUES (-:k);
SELECT bloom_filter_add('mixed', -:k::bigint);
COMMIT;
};

$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=12',
	0,
	[ qr{processed: 96/96}, qr{number of failed transactions: 0 \(} ],
	[qr{^$}],
	'8 clients of batch adds that grow the filter: none fails (no deadlock)',
	{ '038_batch' => batch('cd') });

my $found = sub {
	my ($f, $where) = @_;
	return $node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE NOT hit)
FROM unnest(bloom_filter_contains('$f',
	ARRAY(SELECT b.id * 10000 + i FROM batches b, generate_series(1, 2000) i
	      WHERE b.filter = '$f' $where))) hit});
};
is($found->('cd', ''), '0', 'every key of every committed batch is found');
is($node->safe_psql('postgres', q{SELECT count(*) FROM batches}), '96',
	'every batch committed');

# absent keys: beyond every id used
my $rate = $node->safe_psql('postgres', q{
SELECT round(avg(hit::int), 5)
FROM unnest(bloom_filter_contains('cd',
	ARRAY(SELECT 100000000000 + g FROM generate_series(1, 200000) g))) hit});
my $info = $node->safe_psql('postgres',
	q{SELECT layers, keys FROM bloom_filter_info('cd')});
ok($rate <= 0.015,
	"false positive rate after concurrent batches: $rate, at most 1.5 x 0.01 (layers|keys: $info)");
like($info, qr/^[5-9]\|/, "the filter grew to several layers ($info)");

# batch adds and single adds at once
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=40',
	0,
	[ qr{processed: 320/320}, qr{number of failed transactions: 0 \(} ],
	[qr{^$}],
	'batch adds beside single adds: none fails (no deadlock)',
	{ '038_mixed_batch@1' => batch('mixed'), '038_mixed_single@3' => $single });
is($found->('mixed', ''), '0', 'every key of the mixed run\'s batches is found');
is($node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE NOT hit)
FROM unnest(bloom_filter_contains('mixed', ARRAY(SELECT k FROM singles))) hit}),
	'0', 'every single add is found');

$node->stop;
done_testing();
