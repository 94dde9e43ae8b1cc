#
# test/t/020_fdw_shards.pl: filters across real clusters, over postgres_fdw.
#
# Three clusters: a coordinator and two workers, each worker holding a shard
# of an orders table.  The coordinator sees the shards as foreign tables, and
# as the foreign partitions of one partitioned table, through servers whose
# extensions option lists bloomfilter.  The test checks that
#
#   - bloom_agg over a foreign table runs on the worker (the Remote SQL holds
#     it), and the filter that comes back is, bit for bit, the one the worker
#     builds itself;
#   - bloom_contains(filter, column) runs on the worker, with the filter sent
#     as a literal or as a parameter, and the rows are those the worker finds
#     itself;
#   - the shards' filters, ORed together on the coordinator with
#     bloom_union_agg, are bit for bit the filter of all the rows, whether the
#     per-shard aggregates are written out or come from partitionwise
#     aggregation over the partitioned table; and an anti-join pre-check
#     against it finds exactly the new keys;
#   - a filter's text, taken from one cluster and written as a literal on
#     another, is the same filter.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $coord = PostgreSQL::Test::Cluster->new('coordinator');
my @workers = map { PostgreSQL::Test::Cluster->new("worker$_") } (1, 2);

for my $node ($coord, @workers)
{
	$node->init;
	$node->append_conf('postgresql.conf', "log_statement = none\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');
}

# The shards: worker 1 holds the keys 1 .. 100,000 that are not multiples of
# 3, worker 2 the multiples of 3 and 1,000 keys of worker 1's as well (a key
# may live on two shards); NULL keys on both.
$workers[0]->safe_psql(
	'postgres', q{
CREATE TABLE orders (shard int, k int, t text);
INSERT INTO orders SELECT 1, i, md5(i::text) FROM generate_series(1, 100000) i WHERE i % 3 <> 0;
INSERT INTO orders VALUES (1, NULL, NULL);
ANALYZE orders;
});
$workers[1]->safe_psql(
	'postgres', q{
CREATE TABLE orders (shard int, k int, t text);
INSERT INTO orders SELECT 2, i, md5(i::text) FROM generate_series(1, 100000) i WHERE i % 3 = 0;
INSERT INTO orders SELECT 2, i, md5(i::text) FROM generate_series(1, 1500) i WHERE i % 3 <> 0;
INSERT INTO orders VALUES (2, NULL, NULL);
ANALYZE orders;
});

# The coordinator: one server per worker, a foreign table per shard, and
# the shards as the foreign partitions of one table.
my $setup = "CREATE EXTENSION postgres_fdw;\n";
for my $i (1, 2)
{
	my $w = $workers[ $i - 1 ];
	$setup .= sprintf(
		q{
CREATE SERVER worker%d FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '%s', port '%d', dbname 'postgres', extensions 'bloomfilter');
CREATE USER MAPPING FOR CURRENT_USER SERVER worker%d;
CREATE FOREIGN TABLE orders_w%d (shard int, k int, t text)
    SERVER worker%d OPTIONS (table_name 'orders');
}, $i, $w->host, $w->port, $i, $i, $i);
}
$setup .= q{
CREATE TABLE orders (shard int, k int, t text) PARTITION BY LIST (shard);
CREATE FOREIGN TABLE orders_p1 PARTITION OF orders FOR VALUES IN (1)
    SERVER worker1 OPTIONS (table_name 'orders');
CREATE FOREIGN TABLE orders_p2 PARTITION OF orders FOR VALUES IN (2)
    SERVER worker2 OPTIONS (table_name 'orders');
-- every row, copied to the coordinator, to compare with
CREATE TABLE orders_local AS SELECT * FROM orders;
};
$coord->safe_psql('postgres', $setup);
is($coord->safe_psql('postgres', 'SELECT count(*) FROM orders_local'),
	'101002', 'the coordinator sees both shards');

sub remote_plan
{
	my ($node, $query) = @_;
	return $node->safe_psql('postgres',
		"EXPLAIN (VERBOSE, COSTS OFF) $query");
}

# --- bloom_agg runs on the workers ---

for my $i (1, 2)
{
	my $plan = remote_plan($coord, "SELECT bloom_agg(k, 200000, 0.01) FROM orders_w$i");
	like(
		$plan,
		qr/Remote SQL: SELECT public\.bloom_agg\(k, 200000::bigint, 0\.01::double precision\) FROM public\.orders/,
		"bloom_agg over shard $i runs on worker $i");
	unlike($plan, qr/^\s*Aggregate/m, "no local aggregate over shard $i");

	for my $agg ('bloom_agg(k, 200000, 0.01)', 'bloom_agg(k)', 'bloom_agg(t)',
		'bloom_agg(t, 200000, 0.001)')
	{
		my $remote = $coord->safe_psql('postgres',
			"SELECT md5(($agg)::bytea) FROM orders_w$i");
		my $on_worker = $workers[ $i - 1 ]
		  ->safe_psql('postgres', "SELECT md5(($agg)::bytea) FROM orders");
		is($remote, $on_worker,
			"$agg over shard $i: the worker's own filter, bit for bit");
	}
}

# --- bloom_contains runs on the workers ---

# a filter of every 5th key, made on the coordinator
$coord->safe_psql(
	'postgres', q{
CREATE TABLE probe_filters AS
SELECT 'every 5th' AS name, bloom_agg(i, 20000, 0.01) AS f
FROM generate_series(5, 100000, 5) i;
});
my $filter_text = $coord->safe_psql('postgres',
	"SELECT f FROM probe_filters WHERE name = 'every 5th'");

for my $i (1, 2)
{
	my $w = $workers[ $i - 1 ];
	my $plan = remote_plan($coord,
		"SELECT count(*) FROM orders_w$i WHERE bloom_contains('$filter_text'::bloom, k)");
	like(
		$plan,
		qr/Remote SQL: SELECT count\(\*\) FROM public\.orders WHERE \(public\.bloom_contains\('[A-Za-z0-9+\/=]+'::public\.bloom, k\)\)/,
		"bloom_contains with a literal filter runs on worker $i");
	$plan = remote_plan($coord,
		"SELECT k FROM orders_w$i WHERE bloom_contains((SELECT f FROM probe_filters WHERE name = 'every 5th'), k)");
	like(
		$plan,
		qr/Remote SQL: SELECT k FROM public\.orders WHERE \(public\.bloom_contains\(\$1::public\.bloom, k\)\)/,
		"bloom_contains with a filter from a coordinator table runs on worker $i, as a parameter");

	# the worker's own answer, with the filter written there as a literal
	my $on_worker = $w->safe_psql('postgres',
		"SELECT count(*), md5(string_agg(k::text, ',' ORDER BY k)) FROM orders WHERE bloom_contains('$filter_text'::bloom, k)");
	my $remote = $coord->safe_psql('postgres',
		"SELECT count(*), md5(string_agg(k::text, ',' ORDER BY k)) FROM orders_w$i WHERE bloom_contains((SELECT f FROM probe_filters WHERE name = 'every 5th'), k)");
	is($remote, $on_worker, "shard $i: the same rows as on the worker");
	my $local = $coord->safe_psql('postgres',
		"SELECT count(*), md5(string_agg(k::text, ',' ORDER BY k)) FROM orders_local WHERE shard = $i AND bloom_contains((SELECT f FROM probe_filters WHERE name = 'every 5th'), k)");
	is($remote, $local, "shard $i: the same rows as the local copy");
}

# --- the union of the shards' filters is the filter of the whole table ---

my $whole = $coord->safe_psql('postgres',
	'SELECT md5(bloom_agg(k, 200000, 0.01)::bytea) FROM orders_local');

my $union_sql = q{
SELECT md5(bloom_union_agg(f)::bytea) FROM (
    SELECT bloom_agg(k, 200000, 0.01) AS f FROM orders_w1
    UNION ALL
    SELECT bloom_agg(k, 200000, 0.01) FROM orders_w2) s
};
my $plan = remote_plan($coord, $union_sql);
is(scalar(() = $plan =~ /Remote SQL: SELECT public\.bloom_agg/g),
	2, 'one aggregate per shard, each on its worker');
is($coord->safe_psql('postgres', $union_sql),
	$whole, 'bloom_union_agg of the shard filters is the whole filter');

my $partitionwise_sql = q{
SET enable_partitionwise_aggregate = on;
SELECT md5(bloom_union_agg(f)::bytea) FROM (
    SELECT shard, bloom_agg(k, 200000, 0.01) AS f FROM orders GROUP BY shard) s
};
$plan = remote_plan($coord, q{
    SELECT shard, bloom_agg(k, 200000, 0.01) FROM orders GROUP BY shard});
note "without partitionwise aggregation:\n$plan";
$plan = $coord->safe_psql(
	'postgres', q{
SET enable_partitionwise_aggregate = on;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT shard, bloom_agg(k, 200000, 0.01) FROM orders GROUP BY shard});
is(scalar(() = $plan =~ /Relations: Aggregate on/g),
	2, 'partitionwise aggregation sends each partition\'s aggregate to its worker');
is($coord->safe_psql('postgres', $partitionwise_sql),
	$whole, 'the union of the partitionwise filters is the whole filter');

# The filter of the whole table straight from the partitioned table: right
# in any case; whether the partial aggregates go to the workers depends on
# the PostgreSQL version (15 fetches the keys).
is( $coord->safe_psql(
		'postgres', q{
SET enable_partitionwise_aggregate = on;
SELECT md5(bloom_agg(k, 200000, 0.01)::bytea) FROM orders}),
	$whole,
	'bloom_agg over the partitioned table is the whole filter');
$plan = $coord->safe_psql(
	'postgres', q{
SET enable_partitionwise_aggregate = on;
EXPLAIN (VERBOSE, COSTS OFF) SELECT bloom_agg(k, 200000, 0.01) FROM orders});
note "bloom_agg over the partitioned table, partitionwise:\n$plan";

# text keys, at another rate
is( $coord->safe_psql(
		'postgres', q{
SELECT md5(bloom_union_agg(f)::bytea) FROM (
    SELECT bloom_agg(t, 200000, 0.001) AS f FROM orders_w1
    UNION ALL
    SELECT bloom_agg(t, 200000, 0.001) FROM orders_w2) s}),
	$coord->safe_psql(
		'postgres',
		'SELECT md5(bloom_agg(t, 200000, 0.001)::bytea) FROM orders_local'),
	'text keys: the union is the whole filter');

# --- an anti-join pre-check against the filter of the sharded table ---

$coord->safe_psql(
	'postgres', q{
CREATE TABLE order_filter AS
SELECT bloom_union_agg(f) AS f FROM (
    SELECT bloom_agg(k, 200000, 0.01) AS f FROM orders_w1
    UNION ALL
    SELECT bloom_agg(k, 200000, 0.01) FROM orders_w2) s;
-- 4,000 incoming keys, a quarter of them known (each "maybe" is a query
-- sent to a shard)
CREATE TABLE incoming AS
SELECT CASE WHEN i % 4 = 0 THEN i * 4 ELSE 1000000 + i END AS k
FROM generate_series(1, 4000) i;
});
my ($new, $maybe) = split /\|/, $coord->safe_psql(
	'postgres', q{
SELECT count(*) FILTER (WHERE NOT bloom_contains(f, i.k)
                        OR NOT EXISTS (SELECT 1 FROM orders o WHERE o.k = i.k)),
       count(*) FILTER (WHERE bloom_contains(f, i.k))
FROM incoming i, order_filter});
is( $new,
	$coord->safe_psql(
		'postgres',
		'SELECT count(*) FROM incoming i WHERE NOT EXISTS (SELECT 1 FROM orders_local o WHERE o.k = i.k)'
	),
	'the pre-check finds exactly the new keys');
cmp_ok($maybe, '<', 1000 + 3000 * 0.03,
	'and sends few more than the known keys on to the exact check');

# --- a filter's text is the same filter on another cluster ---

my $text = $workers[0]->safe_psql('postgres',
	'SELECT bloom_agg(k, 200000, 0.01) FROM orders');
is( $coord->safe_psql(
		'postgres', "SELECT md5('$text'::bloom::bytea)"),
	$workers[0]->safe_psql(
		'postgres', 'SELECT md5(bloom_agg(k, 200000, 0.01)::bytea) FROM orders'),
	'a filter written out on a worker and read back on the coordinator');

$_->stop for ($coord, @workers);
done_testing();
