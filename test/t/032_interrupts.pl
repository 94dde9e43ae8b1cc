
# Copyright (c) 2026, the bloomfilter developers

# Sizing ends, even at its extremes.
#
# Sizing a filter for a false-positive rate very close to 1 and a huge
# capacity (bloom_create, bloom_size, the sized bloom_agg) once spent its time
# in bloom_expected_fpr's Poisson sum, whose length grew with the square root
# of the keys per block and never ended once that passed 2^53, and nothing in
# it checks for interrupts (a statement_timeout could not stop it).  The sum
# is now bounded: such requests end with the "too large" error (54000).
#
# Nothing here is timed: each request must give its answer.  The only clock
# is the harness's guard against a statement that never ends, PostgreSQL's
# own default for its TAP tests (PG_TEST_TIMEOUT_DEFAULT, 180 s), which the
# bounded sum is far from on any machine and the unbounded one never ends
# within.  The node is stopped in immediate mode, in case a backend still
# spins.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('interrupts');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

# a sizing near 1 that a filter can hold, for contrast
my ($ret, $out, $err) = $node->psql('postgres',
	'SELECT nblocks FROM bloom_size(1000000000, 0.99999)');
ok($ret == 0 && $out =~ /^[1-9][0-9]*$/,
	"sizing at a rate of 0.99999 works ($out blocks)")
  or diag($err);

foreach my $sql (
	'SELECT bloom_size(9223372036854775807, 0.9999999999999999)',
	'SELECT bloom_create(1000000000000, 0.9999999999)',
	'SELECT bloom_create(1000000000000, 0.999999)')
{
	my $timed_out = 0;
	($ret, $out, $err) = $node->psql(
		'postgres', $sql,
		extra_params => [ '-v', 'VERBOSITY=verbose' ],
		timeout      => $PostgreSQL::Test::Utils::timeout_default,
		timed_out    => \$timed_out);
	ok(!$timed_out && $err =~ /ERROR:  54000: bloom filter for \d+ keys at false-positive rate \S+ would be too large/,
		"$sql ends with the too-large error")
	  or diag($timed_out ? 'still running' : $err);
}
is($node->safe_psql('postgres', 'SELECT nblocks FROM bloom_size(1000, 0.01)'),
	'20', 'the backend keeps working');

# an immediate stop ends any backend that still spins
$node->stop('immediate');
done_testing();
