
# Copyright (c) 2026, the bloomfilter developers

# test/bench/cancel.pl: how soon a cancel ends the extension's long calls.
#
#   perl -I "$(dirname "$(pg_config --pgxs)")/../../src/test/perl" \
#       test/bench/cancel.pl [ROUNDS]
#
# Run it as a user who is not root (initdb refuses root), with the bin/ of
# the server to measure first on PATH (its pg_config too); the logs go to
# TESTDIR (default: a new folder under /tmp).  As root, for PostgreSQL 15:
#
#   runuser -u postgres -- perl -I /usr/lib/postgresql/15/lib/pgxs/src/test/perl \
#       test/bench/cancel.pl 5
#
# For each long call (the text output of a 400 MB filter, the text input of
# its literal, the final function of an unsized bloom_agg of 50 million
# keys) the statement marks the moment just before the call by taking an
# advisory lock; a second session watches pg_locks for it.  Each round runs
# the statement once uncancelled (D: the seconds from the mark to the end,
# the work left) and once cancelled by the watcher as soon as it sees the
# mark (L: from the mark to the end), alternating.  It reports the medians
# and L/D: near 0 when the call checks for interrupts as it goes, near 1
# when the cancel waits for the call to end.  test/t/033_cancel.pl asserts,
# without a clock, that the calls check.

use strict;
use warnings;

use File::Spec;
use File::Temp qw(tempdir);

# what prove_installcheck would set
BEGIN
{
	$ENV{TESTDIR} //= tempdir('bloomfilter-cancel-XXXXXX', TMPDIR => 1);
	chomp(my $pgxs = `pg_config --pgxs`);
	$pgxs =~ s{/src/makefiles/pgxs\.mk$}{};
	$ENV{PG_REGRESS} //= "$pgxs/src/test/regress/pg_regress";
}

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

my $rounds = $ARGV[0] // 3;

# the harness's notes (every query of the watching session) go to the log
# in TESTDIR/tmp_check/log only; the table goes to both
Test::More->builder->output(File::Spec->devnull);
Test::More->builder->failure_output(File::Spec->devnull);

my $node = PostgreSQL::Test::Cluster->new('cancel_bench');
$node->init;
$node->append_conf('postgresql.conf', 'max_parallel_workers_per_gather = 0');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');

my $MARK = 'pg_try_advisory_lock(4242)';
my $watch = $node->background_psql('postgres');

# Run $sql (which takes the advisory lock 4242 just before its long call) in
# a session of its own; once the lock shows in pg_locks, cancel that session
# if $cancel.  Returns the seconds from the mark to the end of the statement.
sub run_marked
{
	my ($sql, $cancel) = @_;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[ 'psql', '-XAtq', '-d', $node->connstr('postgres'), '-c', $sql ],
		'>', \$out, '2>', \$err);
	my $pid = '';
	while ($h->pumpable)
	{
		$pid = $watch->query_safe(
			"SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242 AND granted"
		);
		last if $pid ne '';
		usleep(2_000);
	}
	my $mark = time;
	$watch->query_safe("SELECT pg_cancel_backend($pid)")
	  if $cancel && $pid ne '';
	$h->finish;
	die "the mark was never seen: $err" if $pid eq '';
	die "not cancelled: $err"
	  if $cancel && $err !~ /canceling statement due to user request/;
	die "failed: $err" if !$cancel && $err ne '';
	return time - $mark;
}

sub median
{
	my @v = sort { $a <=> $b } @_;
	return @v % 2 ? $v[ $#v / 2 ] : ($v[ @v / 2 - 1 ] + $v[ @v / 2 ]) / 2;
}

my @cases = (
	[
		'text output, 400 MB filter',
		"SELECT length(CASE WHEN $MARK THEN f::text END) "
		  . "FROM (SELECT bloom_create(n) AS f FROM generate_series(320000000, 320000000) n OFFSET 0) s"
	],
	[
		'text input, 530 MB literal',
		"SELECT octet_length(CASE WHEN $MARK THEN t::bloom::bytea END) "
		  . "FROM (SELECT bloom_create(n)::text AS t FROM generate_series(320000000, 320000000) n OFFSET 0) s"
	],
	[
		'bloom_agg final function, 50M keys',
		"SELECT octet_length(bloom_agg(k)::bytea) FROM ("
		  . "SELECT i::bigint AS k FROM generate_series(1, 50000000) i "
		  . "UNION ALL SELECT CASE WHEN $MARK THEN 0 END) s"
	]);

printf "%-36s %10s %10s %8s\n", 'call', 'D (s)', 'L (s)', 'L/D';
foreach my $case (@cases)
{
	my ($name, $sql) = @$case;
	my (@d, @l);
	for (1 .. $rounds)
	{
		push @d, run_marked($sql, 0);
		push @l, run_marked($sql, 1);
	}
	my ($d, $l) = (median(@d), median(@l));
	printf "%-36s %10.3f %10.3f %8.3f\n", $name, $d, $l, $l / $d;
}

$watch->quit;
$node->stop('immediate');
