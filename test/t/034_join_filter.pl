#
# test/t/034_join_filter.pl: anti and semi joins that probe a bloomfilter
# index by themselves (bloomfilter.join_filter), where a regression test
# cannot look:
#
#   - a fresh connection with nothing preloaded (no shared_preload_libraries,
#     session_preload_libraries or LOAD) gets the node in the plan of its
#     very first query: the planner opens the inner table's indexes, which
#     loads the library, before it searches for joins;
#   - on a hot standby the node is planned and run (reading the index's
#     bits without writing anything), gives the rows of the plain plan, and
#     finds keys the primary committed after the standby's last query.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$primary->start;
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

$primary->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE orders (k bigint);
INSERT INTO orders SELECT g * 2 FROM generate_series(1, 20000) g;
CREATE INDEX orders_k ON orders (k);
CREATE INDEX orders_k_bf ON orders USING bloomfilter (k);
CREATE TABLE incoming (k int);
INSERT INTO incoming SELECT g * 2 + 1 FROM generate_series(1, 2000) g;
INSERT INTO incoming SELECT g * 1000 FROM generate_series(1, 20) g;
INSERT INTO incoming VALUES (NULL);
VACUUM ANALYZE orders;
VACUUM ANALYZE incoming;
});

my $anti = 'SELECT count(*) FROM incoming i WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.k = i.k)';
my $semi = 'SELECT count(*) FROM incoming i WHERE EXISTS (SELECT 1 FROM orders o WHERE o.k = i.k)';

# a fresh connection: its first query is the EXPLAIN
my $plan = $primary->safe_psql('postgres', "EXPLAIN (COSTS OFF) $anti");
like($plan, qr/Custom Scan \(BloomAntiJoin\)/,
	'a fresh connection plans the node in its first query');
like($plan, qr/Bloom Filter: orders_k_bf/, 'and names the index');
is( $primary->safe_psql('postgres',
		q{SELECT count(*) FROM pg_settings WHERE name IN ('shared_preload_libraries', 'session_preload_libraries', 'local_preload_libraries') AND setting <> ''}),
	'0', 'with nothing preloaded');
is($primary->safe_psql('postgres', $anti), '2001', 'anti join rows on the primary');
is($primary->safe_psql('postgres', $semi), '20', 'semi join rows on the primary');

# the standby
$primary->wait_for_catchup($standby);
like($standby->safe_psql('postgres', "EXPLAIN (COSTS OFF) $anti"),
	qr/BloomAntiJoin/, 'the standby plans the node');
like($standby->safe_psql('postgres', "EXPLAIN (COSTS OFF) $semi"),
	qr/BloomSemiJoin/, 'and for a semi join');
is($standby->safe_psql('postgres', $anti), '2001', 'anti join rows on the standby');
is($standby->safe_psql('postgres', $semi), '20', 'semi join rows on the standby');
is( $standby->safe_psql('postgres',
		"SET bloomfilter.join_filter = off; $anti"),
	'2001', 'the plain plan on the standby agrees');
like( $standby->safe_psql('postgres',
		"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $anti"),
	qr/Rows Answered by Filter: 2000/, 'the filter answers the absent keys on the standby');

# keys committed on the primary after the standby's last query are found
$primary->safe_psql('postgres', 'INSERT INTO orders SELECT g * 2 + 1 FROM generate_series(1, 100) g');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $anti), '1901', 'new keys found on the standby (anti)');
is($standby->safe_psql('postgres', $semi), '120', 'new keys found on the standby (semi)');
is( $standby->safe_psql('postgres',
		"SET bloomfilter.join_filter = off; $semi"),
	'120', 'as the plain plan finds them');

$standby->stop;
$primary->stop;
done_testing();
