
# Copyright (c) 2026, the bloomfilter developers
# run-tests: alone (it times itself: test/run-tests.sh runs it with
# nothing beside it)

# Sizing ends quickly, even at its extremes.
#
# Sizing a filter for a false-positive rate very close to 1 and a huge
# capacity (bloom_create, bloom_size, the sized bloom_agg) once spent its time
# in bloom_expected_fpr's Poisson sum, whose length grew with the square root
# of the keys per block and never ended once that passed 2^53, and nothing in
# it checks for interrupts.  The sum is now bounded: such requests end within
# a second or so with the "too large" error, or are cancelled.
#
# The node is stopped in immediate mode, in case a backend still spins.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $node = PostgreSQL::Test::Cluster->new('interrupts');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

# a sizing that is quick, for contrast
my $t0 = time;
my ($ret, $out, $err) = $node->psql('postgres',
	"SET statement_timeout = '1s'; SELECT nblocks FROM bloom_size(1000000000, 0.99999)");
is($ret, 0, 'sizing at a rate of 0.99999 works');
cmp_ok(time - $t0, '<', 10, 'and takes well under the timeout');

foreach my $sql (
	'SELECT bloom_size(9223372036854775807, 0.9999999999999999)',
	'SELECT bloom_create(1000000000000, 0.9999999999)',
	'SELECT bloom_create(1000000000000, 0.999999)')
{
	my $timed_out = 0;
	$t0 = time;
	($ret, $out, $err) = $node->psql(
		'postgres',
		"SET statement_timeout = '5s'; $sql",
		timeout   => 20,
		timed_out => \$timed_out);
	my $took = time - $t0;
	ok( !$timed_out
		  && $err =~ /would be too large|canceling statement due to statement timeout/
		  && $took < 10,
		sprintf('%s ends with an error within 10 s (%s after %.1f s)',
			$sql, $timed_out ? 'still running' : 'ended', $took));
}
is($node->safe_psql('postgres', 'SELECT nblocks FROM bloom_size(1000, 0.01)'),
	'20', 'the backend keeps working');

# an immediate stop ends any backend that still spins
$node->stop('immediate');
done_testing();
