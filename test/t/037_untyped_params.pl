#
# test/t/037_untyped_params.pl: keys sent as untyped parameters, as pgbench
# -M prepared and -M extended send them (and drivers that leave a
# parameter's type to the server), are read with the index key type's input
# function, as "id = $1" reads them (issue 37, item 4):
# bloom_index_contains, bloom_index_partitions through a partitioned index,
# and bloom_contains on a stored filter.  Every key a row holds must be
# found; a script that meets a false "absent", or an error, aborts its
# client and fails the run.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('untyped');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION bloomfilter;
CREATE TABLE users (id bigint);
INSERT INTO users SELECT generate_series(1, 10000);
CREATE INDEX users_bf ON users USING bloomfilter (id);
CREATE TABLE parts (id bigint) PARTITION BY RANGE (id);
CREATE TABLE parts1 PARTITION OF parts FOR VALUES FROM (1) TO (5001);
CREATE TABLE parts2 PARTITION OF parts FOR VALUES FROM (5001) TO (10001);
INSERT INTO parts SELECT generate_series(1, 10000);
CREATE INDEX parts_bf ON parts USING bloomfilter (id);
CREATE TABLE filters AS SELECT bloom_agg(id, 10000, 0.01) AS f FROM users;
});

# the keys 1..10000 are all held: each probe must say "maybe", and the
# partitions' probe must name the partition that holds the key
my $script = q{
\set k random(1, 10000)
SELECT bloom_index_contains('users_bf', :k) AS found \gset
\if :found
\else
SELECT 'false negative in bloom_index_contains'::int;
\endif
SELECT count(*) AS parts FROM bloom_index_partitions('parts_bf', :k) WHERE bloom_index_partitions = (CASE WHEN :k <= 5000 THEN 'parts1' ELSE 'parts2' END)::regclass \gset
\if :parts = 1
\else
SELECT 'false negative in bloom_index_partitions'::int;
\endif
SELECT bloom_contains(f, :k) AS in_filter FROM filters \gset
\if :in_filter
\else
SELECT 'false negative in bloom_contains'::int;
\endif
};

for my $mode ('prepared', 'extended')
{
	$node->pgbench(
		"--no-vacuum --client=2 --transactions=500 --protocol=$mode",
		0,
		[qr{processed: 1000/1000}],
		[qr{^$}],
		"untyped parameters with -M $mode",
		{ "037_untyped_$mode" => $script });
}

# a value the key type does not accept gets its input error, not a family
# mismatch
my ($ret, $out, $err) = $node->psql('postgres', q{
PREPARE p AS SELECT bloom_index_contains('users_bf', $1);
EXECUTE p('abc');
});
like($err, qr{invalid input syntax for type bigint: "abc"},
	'a wrong value gets the key type\'s input error');

$node->stop;
done_testing();
