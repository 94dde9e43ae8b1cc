#
# test/t/023_index_rate.pl: the false-positive rate a bloomfilter index was
# created for holds under concurrent bulk writers (issue 29, item 8).
#
# Eight sessions each insert 100,000 new keys in one statement into a table
# whose index was created empty (the default capacity: 1,000 keys).  Each
# sets its keys in batches; a batch that took the room the metapage showed,
# without the others seeing it taken, let eight writers fill one layer eight
# times over.  The rate is measured on 200,000 keys no row holds, against the
# requested 1% with room for sampling error (1.2%: the binomial standard
# deviation of 200,000 probes at 1% is 0.02%), before and after a VACUUM
# that compacts the index; every committed key is found throughout.  The
# writers run together on whatever cores there are: the test checks rates
# and keys, never times.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('rate');
$node->init;
$node->append_conf('postgresql.conf', 'autovacuum = off');
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE w (k bigint);
CREATE INDEX w_k ON w USING bloomfilter (k);
});

$node->pgbench(
	'--no-vacuum --client=8 --jobs=8 --transactions=1',
	0,
	[qr{processed: 8/8}],
	[qr{^$}],
	'eight writers of 100,000 keys each',
	{
		'023_writer' => q{
INSERT INTO w SELECT g FROM generate_series(:client_id * 100000 + 1, (:client_id + 1) * 100000) g;
}
	});

my $probes = 200000;
my $limit = int($probes * 0.012);
my $check = qq{
SELECT count(*) AS rows,
	   (SELECT count(*) FROM generate_series(-$probes, -1) g
		WHERE bloom_index_contains('w_k', g)) AS false_positives,
	   bloom_index_verify('w_k') AS missing
FROM w};

my ($rows, $fp, $missing) = split /\|/, $node->safe_psql('postgres', $check);
is($rows, '800000', 'the eight writers committed 800,000 rows');
cmp_ok($fp, '<=', $limit,
	"false positives of $probes absent keys within 1.2% of them after the load ($fp)");
is($missing, '0', 'no committed key is missing');

$node->safe_psql('postgres', 'VACUUM w');
($rows, $fp, $missing) = split /\|/, $node->safe_psql('postgres', $check);
cmp_ok($fp, '<=', $limit,
	"and after a VACUUM compacted the index ($fp)");
is($missing, '0', 'no committed key is missing after the compaction');
is( $node->safe_psql('postgres',
		q{SELECT layers || ' ' || coalesce(advice, 'no advice') FROM bloom_index_info('w_k')}),
	'1 no advice', 'one layer, and no advice');

$node->stop;
done_testing();
