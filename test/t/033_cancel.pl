
# Copyright (c) 2026, the bloomfilter developers

# A cancel reaches the extension's own long loops, not only the row loops of
# PostgreSQL around them.
#
# Each statement below cancels itself, with pg_cancel_backend(pg_backend_pid())
# in the expression evaluated just before one long call of the extension: the
# text output of a 100 MB filter, the text input of its literal, the final
# function of an unsized bloom_agg of a million keys (at a group boundary:
# the first row of the next group makes the cancel).  PostgreSQL checks for
# no interrupt between that expression and the call, so the cancel is
# pending when the call starts, whatever the machine's speed or load:
#
# - a call that checks for interrupts in its loop ends the statement with
#   57014 before its result exists;
# - a call that does not runs to its end, and its result row reaches the
#   client (COPY TO STDOUT sends each row as it is made) before the
#   executor's next check ends the statement with the same 57014.
#
# So the test looks at what reached the client, not at a clock.  That the
# cancel stays pending up to the call is PostgreSQL's doing, not the
# extension's: each case is also run with a built-in function in the place
# of the extension's (byteaout, decode, count), which checks for no interrupt
# and whose row must reach the client.  If a PostgreSQL version checked on
# the way, these controls would fail, rather than the extension's cases
# passing for the wrong reason.  (How soon a cancel sent from elsewhere ends
# such a call is a benchmark: test/bench/cancel.pl.)

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
# one backend does all the work (no parallel workers to cancel), the sort of
# the aggregate's rows stays in memory, and the aggregate is a GroupAggregate
# over sorted rows, so that its final function runs at the group boundary
$node->append_conf(
	'postgresql.conf', q{
max_parallel_workers_per_gather = 0
work_mem = '256MB'
enable_hashagg = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

my $CANCEL = 'pg_cancel_backend(pg_backend_pid())';

# a filter of 100 MB (two and a bit chunks of the text conversions), made
# from a generate_series so that the planner cannot fold it into a constant
my $filter = 'SELECT bloom_create(n) AS f FROM generate_series(80000000, 80000000) n OFFSET 0';
my $literal = 'SELECT bloom_create(n)::text AS t FROM generate_series(80000000, 80000000) n OFFSET 0';
# group 1: a million keys; group 2: one row, whose projection (above the
# sort, as volatile) cancels before the aggregate finishes group 1
my $groups = "SELECT g, k, CASE WHEN g = 2 THEN $CANCEL END AS c FROM ("
  . 'SELECT 1 AS g, i::bigint AS k FROM generate_series(1, 1000000) i '
  . 'UNION ALL SELECT 2, 0) u ORDER BY g OFFSET 0';

# [ name, the extension's call, the control with a built-in call ]
my @cases = (
	[
		'text output of a 100 MB filter',
		"SELECT length(CASE WHEN $CANCEL THEN f END::text) FROM ($filter) s",
		"SELECT length(CASE WHEN $CANCEL THEN f::bytea END::text) FROM ($filter) s"
	],
	[
		'text input of its 133 MB literal',
		"SELECT octet_length(CASE WHEN $CANCEL THEN t::bloom::bytea END) FROM ($literal) s",
		"SELECT octet_length(CASE WHEN $CANCEL THEN decode(t, 'base64') END) FROM ($literal) s"
	],
	[
		'final function of an unsized bloom_agg of a million keys',
		"SELECT g, octet_length(bloom_agg(k)::bytea) FROM ($groups) s GROUP BY g",
		"SELECT g, count(k) FROM ($groups) s GROUP BY g"
	]);

# COPY the query's rows to psql's standard output; returns what reached it
# and the error
sub copy_out
{
	my ($query) = @_;
	my ($out, $err);
	$node->psql(
		'postgres', "COPY ($query) TO STDOUT",
		stdout => \$out,
		stderr => \$err,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	return ($out, $err);
}

foreach my $case (@cases)
{
	my ($name, $sql, $control) = @$case;

	my ($out, $err) = copy_out($control);
	like($err, qr/ERROR:  57014: canceling statement due to user request/,
		"$name, control: the built-in call is cancelled too");
	isnt($out, '',
		"$name, control: but only after its row reached the client (the cancel was pending at the call)"
	);

	($out, $err) = copy_out($sql);
	like($err, qr/ERROR:  57014: canceling statement due to user request/,
		"$name: the statement is cancelled");
	is($out, '', "$name: within the call: its result never reached the client");
}

is($node->safe_psql('postgres', 'SELECT nblocks FROM bloom_size(1000, 0.01)'),
	'20', 'the backend keeps working');

$node->stop;
done_testing();
