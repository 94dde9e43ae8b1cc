
# Copyright (c) 2026, the bloomfilter developers

# test/t/038_shared_concurrency.pl: a shared filter (bloom_filter_*, issue
# 39) under pgbench, many sessions adding at once past its capacity.
#
#   - 8 clients of 80 batch adds of 2,000 keys into a filter of capacity 2,000
#     (each batch fills a layer, most grow the filter): no transaction fails
#     (before, some deadlocked, 40P01: a batch held the head row while it
#     locked the slices of a layer another batch had added, or the head row
#     a lost first add had locked), every key of every committed batch is
#     found, and the false positive rate measured on absent keys is within
#     1.5 x the requested 1 % (concurrent batches that each read the layer's
#     count before waiting for the other's slices used to overfill layers:
#     9.2 % measured);
#   - batch adds of 500 keys into layers of 1,000 (expansion 1), the key
#     family set beforehand: no transaction fails (before, a batch that
#     locked the head row to grow the filter and found it grown kept it
#     while it locked the new layer's slices, and another that filled that
#     layer waited for the head row), every key found;
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
SELECT bloom_filter_create('even', 1000, 0.01, expansion => 1);
SELECT bloom_filter_add('even', 0::bigint);
CREATE SEQUENCE batch_id;
CREATE TABLE batches (filter text, id bigint);
CREATE TABLE singles (k bigint);
});

# a batch's id is kept in the transaction that adds its keys: a batch that
# failed leaves no id
sub batch
{
	my ($f, $n) = @_;
	$n //= 2000;
	return qq{
BEGIN;
INSERT INTO batches SELECT '$f', nextval('batch_id') RETURNING id \\gset
SELECT bloom_filter_add('$f', array(SELECT :id::bigint * 10000 + i FROM generate_series(1, $n) i));
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
	'--no-vacuum --client=8 --jobs=2 --transactions=10',
	0,
	[ qr{processed: 80/80}, qr{number of failed transactions: 0 \(} ],
	[qr{^$}],
	'8 clients of batch adds that grow the filter: none fails (no deadlock)',
	{ '038_batch' => batch('cd') });

my $found = sub {
	my ($f, $n) = @_;
	return $node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE NOT hit)
FROM unnest(bloom_filter_contains('$f',
	ARRAY(SELECT b.id * 10000 + i FROM batches b, generate_series(1, $n) i
	      WHERE b.filter = '$f'))) hit});
};
is($found->('cd', 2000), '0', 'every key of every committed batch is found');
is($node->safe_psql('postgres', q{SELECT count(*) FROM batches}), '80',
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

# layers of one size (expansion 1): a layer filled every second batch, so
# that a batch often finds the filter grown by another while it waits (the
# key family set beforehand): the batch that locked the head row to grow
# the filter, found it grown and went on into the new layer's slices held
# the head row while another batch filled that layer and waited for it
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=6',
	0,
	[ qr{processed: 48/48}, qr{number of failed transactions: 0 \(} ],
	[qr{^$}],
	'8 clients of batch adds into layers of one size: none fails (no deadlock)',
	{ '038_even' => batch('even', 500) });
is($found->('even', 500), '0', 'every key of the batches into layers of one size is found');

# batch adds and single adds at once
$node->pgbench(
	'--no-vacuum --client=8 --jobs=2 --transactions=30',
	0,
	[ qr{processed: 240/240}, qr{number of failed transactions: 0 \(} ],
	[qr{^$}],
	'batch adds beside single adds: none fails (no deadlock)',
	{ '038_mixed_batch@1' => batch('mixed'), '038_mixed_single@3' => $single });
is($found->('mixed', 2000), '0', 'every key of the mixed run\'s batches is found');
is($node->safe_psql('postgres', q{
SELECT count(*) FILTER (WHERE NOT hit)
FROM unnest(bloom_filter_contains('mixed', ARRAY(SELECT k FROM singles))) hit}),
	'0', 'every single add is found');

$node->stop;
done_testing();
