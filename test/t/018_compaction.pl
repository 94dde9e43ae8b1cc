#
# test/t/018_compaction.pl: a bloomfilter index keeps every committed key
# while VACUUM compacts it (src/bfcompact.c), through crashes in the middle
# of a compaction and of a move, under eight concurrent writers, and on a
# hot standby that replays it all.
#
# 1. Crash mid-compaction.  A table whose index has grown by layers, four
#    sessions inserting (each recording in the same transaction how far it
#    got, as 015 does), and a VACUUM slowed by vacuum_cost_delay so that its
#    compaction takes seconds.  The server is stopped (immediate) once
#    pg_stat_progress_vacuum shows the VACUUM cleaning up the index and
#    bloom_index_info's advice says a compaction is under way; after the
#    restart the advice must say the compaction was cut off (otherwise the
#    crash came too late, and the test tries again: it never passes on a
#    crash that missed).  After every crash: bloom_index_verify = 0 and every
#    key the writers committed is found.  Then VACUUM finishes the
#    compaction (one layer, no advice), and the index still takes inserts.
# 2. A transaction that inserted (and set its keys, in the old layers)
#    before the compaction named its new layer, and commits while the
#    compaction runs: its keys are found after the compaction dropped the
#    old layers.  (A compaction that filled its layer from an MVCC snapshot
#    would miss them.)
# 3. Crash mid-move: a lone layer being copied down the file (an index
#    with a capacity of 20 million keys: 3,333 pages), by a VACUUM slowed by
#    vacuum_cost_delay, which the copy honours page by page: the move lasts
#    13 s or more (a 4 ms sleep after each page), where the unslowed one is
#    over in a quarter of a second and the poll below missed it on a loaded
#    machine.  A watching session sees the move under way in the metapage
#    and the test kills the VACUUM's backend (SIGKILL: the postmaster
#    restarts, as after a crash).  Same checks; VACUUM finishes the move and
#    gives the file's tail back.
# 4. Moves while large batches of keys are set: two sessions insert 32,768
#    new keys per transaction (set in one go, under the metapage's lock) and
#    delete their batches older than the last three; the test runs VACUUM 15
#    times, most compacting the index and moving its new layer down the file
#    (a copy of its pages).  After every VACUUM every live row's key is
#    found.  (Inserts that let go of the metapage before setting their bits
#    lose a batch whose bits they set in a layer after the move copied it:
#    a race, which most runs catch, in a VACUUM or two of the 15.)
# 5. Eight writers inserting distinct keys (the index keeps growing), the
#    test running VACUUM over and over (compactions, moves, truncations)
#    until five compactions have happened, one session looping
#    bloom_index_verify and a probe of every key the writers committed,
#    and, while each VACUUM runs, the same checks on a hot standby.  Every
#    check on both must find every key; at the end the writers' keys are
#    all found.
# 6. The standby, caught up, answers 200,000 probes as the primary, verifies
#    0, and replayed the compactions' records consistently
#    (wal_consistency_checking in the VACUUM sessions).
#
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomSessions qw(start_session stop_sessions);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
max_connections = 30
log_statement = none
# the test runs every VACUUM itself
autovacuum = off
# part 3 kills a backend: the postmaster restarts as after a crash
restart_after_crash = on
});
$primary->start;
$primary->safe_psql('postgres',
	q{SELECT pg_create_physical_replication_slot('standby')});
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf(
	'postgresql.conf', q{
primary_slot_name = 'standby'
# replay waits for the checks of part 5 rather than cancel them: the index's
# truncation takes an ACCESS EXCLUSIVE lock (as a heap's does), and on a busy
# machine the standby lags by more than the default 30 s, after which
# conflicting queries are cancelled at once
max_standby_streaming_delay = -1
});
$standby->start;

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION bloomfilter;
CREATE EXTENSION pageinspect;
-- what each writer committed, in the same transaction as its rows
CREATE TABLE done (who int PRIMARY KEY, n bigint, per int);
-- a row here ends the loops of part 4
CREATE TABLE stop (flag bool);
-- Writer w inserts per (at most 100) keys per transaction into table t,
-- keys w * 10^9 + i * 100 + j for its i-th transaction, going on from
-- where an earlier call (cut off by a crash) left off, until it has done n
-- transactions or stop has a row; it sleeps pause seconds after each.
CREATE PROCEDURE writer(t text, w int, n int, per int DEFAULT 50, pause float8 DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
	first bigint;
BEGIN
	INSERT INTO done VALUES (w, 0, per) ON CONFLICT (who) DO NOTHING;
	SELECT d.n + 1 INTO first FROM done d WHERE who = w;
	COMMIT;
	FOR i IN first .. first + n - 1 LOOP
		EXECUTE format('INSERT INTO %I SELECT $1 * 1000000000 + $2 * 100 + j, $1
			FROM generate_series(0, $3 - 1) j', t) USING w::bigint, i, per;
		UPDATE done SET n = i WHERE who = w;
		COMMIT;
		EXIT WHEN EXISTS (SELECT FROM stop);
		PERFORM pg_sleep(pause);
	END LOOP;
END $$;
-- keys writers lo .. hi committed that index idx does not report
CREATE FUNCTION committed_missing(idx regclass, lo int, hi int) RETURNS bigint
LANGUAGE sql AS $$
SELECT count(*) FROM done d, generate_series(1, d.n) i, generate_series(0, d.per - 1) j
WHERE d.who BETWEEN lo AND hi
  AND NOT bloom_index_contains(idx, d.who * 1000000000::bigint + i * 100 + j)
$$;
});

# A VACUUM of $table in the background, after the SET commands @set, in a
# session named $name.
sub start_vacuum
{
	my ($node, $name, $table, @set) = @_;
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start(
		[
			$node->installed_command('psql'), '-X', '-v', 'ON_ERROR_STOP=1',
			(map { ('-c', $_) } @set, "VACUUM $table"),
			'-d', $node->connstr('postgres') . " application_name=$name"
		],
		'<', \$in, '>', \$out, '2>', \$err);
	return { name => $name, h => $h, out => \$out, err => \$err };
}

# a compaction slow enough to be caught: a sleep after every page read
my @slow = ('SET vacuum_cost_delay = 1', 'SET vacuum_cost_limit = 1');

# (the advice that the table has no btree for the join pre-check aside:
# these tables have none, and the compaction is what is checked)
sub info
{
	my ($node, $index) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT layers || ' ' || coalesce(CASE WHEN advice NOT LIKE 'No btree or hash index%' THEN advice END, '-') FROM bloom_index_info('$index')});
}

#
# 1. Crash mid-compaction
#
$primary->safe_psql(
	'postgres', q{
CREATE TABLE keys (k bigint, who int);
CREATE INDEX keys_bf ON keys USING bloomfilter (k) WITH (capacity = 10000);
INSERT INTO keys SELECT g, 0 FROM generate_series(1, 400000) g;
-- the table all-visible, the index not compacted: the slow VACUUM below
-- spends its time in the compaction's scan
VACUUM (INDEX_CLEANUP off) keys;
});

my $cut_off = 0;
for my $attempt (1 .. 4)
{
	my ($layers) = split / /, info($primary, 'keys_bf');
	cmp_ok($layers, '>', 1, "attempt $attempt: the index has $layers layers");
	my @writers =
	  map { start_session($primary, "c$_", "CALL writer('keys', $_, 1000000)") } 1 .. 4;
	my $started = $primary->safe_psql('postgres',
		q{SELECT coalesce(sum(n), 0) FROM done WHERE who BETWEEN 1 AND 4});
	ok( $primary->poll_query_until(
			'postgres',
			qq{SELECT coalesce(sum(n), 0) >= $started + 80 FROM done WHERE who BETWEEN 1 AND 4}),
		"attempt $attempt: writers under way");
	my $vacuum = start_vacuum($primary, 'vacuum', 'keys', @slow);
	# (layers = 1: the compaction is over already; the crash then checks
	# whatever comes after it)
	ok( $primary->poll_query_until(
			'postgres', q{
SELECT EXISTS (SELECT FROM pg_stat_progress_vacuum
               WHERE relid = 'keys'::regclass AND phase = 'cleaning up indexes')
   AND (SELECT advice LIKE 'A compaction %' OR layers = 1 FROM bloom_index_info('keys_bf'))}),
		"attempt $attempt: VACUUM is compacting the index");
	my $committed = $primary->safe_psql('postgres',
		q{SELECT sum(n) FROM done WHERE who BETWEEN 1 AND 4});
	# (a crash loses the WAL not yet written, which may say the compaction began)
	my $lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	$primary->poll_query_until('postgres', qq{SELECT pg_current_wal_flush_lsn() >= '$lsn'});

	$primary->stop('immediate');
	stop_sessions(@writers, $vacuum);
	$primary->start;

	my $after = info($primary, 'keys_bf');
	note "attempt $attempt: after the restart: $after";
	my $kept =
	  is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('keys_bf')}),
		'0', "attempt $attempt: after the crash every live row's key is found");
	$kept &= cmp_ok(
		$primary->safe_psql('postgres', q{SELECT sum(n) FROM done WHERE who BETWEEN 1 AND 4}),
		'>=', $committed, "attempt $attempt: the inserts committed before the crash are there");
	$kept &= is($primary->safe_psql('postgres', q{SELECT committed_missing('keys_bf', 1, 4)}),
		'0', "attempt $attempt: every key the writers committed is found");
	# (no point in crashing a broken index again)
	last unless $kept;
	if ($after =~ /^\d+ A compaction was cut off/)
	{
		$cut_off = 1;
		last;
	}
	# the compaction finished before the crash: grow the index again
	$primary->safe_psql(
		'postgres', qq{
INSERT INTO keys SELECT g, 0 FROM generate_series($attempt * 1000000 + 1, $attempt * 1000000 + 600000) g;
VACUUM (INDEX_CLEANUP off) keys;
});
}
ok($cut_off, 'a crash cut a compaction off (the advice says so after the restart)');

# the next VACUUM finishes it: one layer, nothing to advise
$primary->safe_psql('postgres', 'VACUUM keys');
is(info($primary, 'keys_bf'), '1 -', 'VACUUM finished the compaction: one layer, no advice');
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('keys_bf')}),
	'0', 'after the finished compaction: every live row\'s key is found');
is($primary->safe_psql('postgres', q{SELECT committed_missing('keys_bf', 1, 4)}),
	'0', 'after the finished compaction: every key the writers committed is found');
$primary->safe_psql('postgres', q{CALL writer('keys', 1, 500)});
is( $primary->safe_psql('postgres',
		q{SELECT bloom_index_verify('keys_bf') + committed_missing('keys_bf', 1, 4)}),
	'0', 'inserts go on after it, and are found');

#
# 2. A transaction that set its keys in the old layers commits during the
#    compaction
#
$primary->safe_psql(
	'postgres', q{
CREATE TABLE held (k bigint);
CREATE INDEX held_bf ON held USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO held SELECT g FROM generate_series(1, 100000) g;
VACUUM (INDEX_CLEANUP off) held;
});
my ($grown) = split / /, info($primary, 'held_bf');
cmp_ok($grown, '>', 1, "the index has $grown layers");
my $open = $primary->background_psql('postgres');
$open->query_safe('BEGIN');
$open->query_safe(q{INSERT INTO held SELECT g FROM generate_series(6000001, 6020000) g});
# a probe sets the transaction's keys first (in the layers there are now)
$open->query_safe(q{SELECT bloom_index_contains('held_bf', 6000001::bigint)});
my $vacuum = start_vacuum($primary, 'vacuum', 'held', @slow);
ok( $primary->poll_query_until(
		'postgres',
		q{SELECT advice LIKE 'A compaction %' FROM bloom_index_info('held_bf')}),
	'the compaction has named its new layer');
$open->query_safe('COMMIT');
$open->quit;
stop_sessions($vacuum);
is(${ $vacuum->{err} }, '', 'the VACUUM ended without an error');
is(info($primary, 'held_bf'), '1 -', 'the compaction dropped the old layers');
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) FROM generate_series(6000001, 6020000) g
WHERE NOT bloom_index_contains('held_bf', g::bigint)}),
	'0',
	'the keys of a transaction that committed during the compaction are found');
is($primary->safe_psql('postgres', q{SELECT bloom_index_verify('held_bf')}),
	'0', 'and every live row\'s key');

#
# 3. Crash mid-move
#
# A capacity large enough that copying the layer takes a while (about 26 MB).
# Deleting most rows makes a compaction due (most keys are stale); its new
# layer lies after the old one, which the move then copies it back over.
$primary->safe_psql(
	'postgres', q{
CREATE TABLE m (k bigint, who int);
CREATE INDEX m_bf ON m USING bloomfilter (k) WITH (capacity = 20000000);
});
my $moved = 0;
for my $attempt (1 .. 3)
{
	$primary->safe_psql(
		'postgres', qq{
INSERT INTO m SELECT g, 0 FROM generate_series($attempt * 100000, $attempt * 100000 + 50000) g;
DELETE FROM m WHERE who = 0 AND k % 10 <> 0;
});
	my @writers =
	  map { start_session($primary, "m$_", "CALL writer('m', $_, 1000000)") } 21 .. 22;
	my $started = $primary->safe_psql('postgres',
		q{SELECT coalesce(sum(n), 0) FROM done WHERE who BETWEEN 21 AND 22});
	ok( $primary->poll_query_until(
			'postgres',
			qq{SELECT coalesce(sum(n), 0) >= $started + 40 FROM done WHERE who BETWEEN 21 AND 22}),
		"move attempt $attempt: writers under way");
	my $watch = $primary->background_psql('postgres');
	# (the copy sleeps after each page: the move is long enough to be seen
	# however loaded the machine)
	my $vac = start_vacuum($primary, 'vacuum_m', '(DISABLE_PAGE_SKIPPING) m', @slow);
	# the VACUUM's backend; then the metapage's op (bfindex.h: after the page
	# header, magic, version, layout and hash) until it is BF_OP_MOVE and the
	# WAL that says so is written (a crash loses the WAL not yet written)
	my ($pid, $op, $lsn, $flushed, $committed) = ('', 0, '', 'f', 0);
	while ($vac->{h}->pumpable && !($op == 2 && $flushed eq 't'))
	{
		$vac->{h}->pump_nb;
		$pid ||= $watch->query_safe(
			q{SELECT pid FROM pg_stat_activity WHERE application_name = 'vacuum_m'});
		my $now;
		($op, $now, $committed) = split /\|/, $watch->query_safe(
			q{SELECT get_byte(get_raw_page('m_bf', 0), 34) || '|' || pg_current_wal_insert_lsn()
			         || '|' || (SELECT sum(n) FROM done WHERE who BETWEEN 21 AND 22)});
		$lsn = $op == 2 ? ($lsn || $now) : '';
		$flushed = $lsn ? $watch->query_safe(qq{SELECT pg_current_wal_flush_lsn() >= '$lsn'}) : 'f';
	}
	my $log_offset = -s $primary->logfile;
	# (kill says whether the process was there to be killed)
	if ($op == 2 && $flushed eq 't' && kill('KILL', $pid))
	{
		note "move attempt $attempt: killed the VACUUM ($pid) during the move";
		# (psql fed a query while the server restarts may find its pipe closed:
		# the log says when it is back)
		$primary->wait_for_log(qr/was terminated by signal 9/, $log_offset);
		$primary->wait_for_log(qr/database system is ready to accept connections/,
			$log_offset);
	}
	else
	{
		note "move attempt $attempt: the VACUUM ended before the move was seen";
		$primary->stop('immediate');
		$primary->start;
	}
	# (its connection is gone with the crash)
	$watch->{run}->kill_kill;
	stop_sessions(@writers, $vac);
	# the postmaster restarts (restart_after_crash)
	ok($primary->poll_query_until('postgres', 'SELECT pg_is_in_recovery() = false'),
		"move attempt $attempt: the server is back");

	my $after = info($primary, 'm_bf');
	note "move attempt $attempt: after the restart: $after";
	is( $primary->safe_psql('postgres',
			q{SELECT bloom_index_verify('m_bf') + committed_missing('m_bf', 21, 22)}),
		'0', "move attempt $attempt: after the crash every key is found");
	cmp_ok($primary->safe_psql('postgres', q{SELECT sum(n) FROM done WHERE who BETWEEN 21 AND 22}),
		'>=', $committed, "move attempt $attempt: the inserts committed before the crash are there");
	if ($after =~ /^2 A move was cut off/)
	{
		$moved = 1;
		last;
	}
	$primary->safe_psql('postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) m');
}
ok($moved, 'a crash cut a move off (the advice said so after the restart)');
my $size_before = $primary->safe_psql('postgres', q{SELECT pg_relation_size('m_bf')});
$primary->safe_psql('postgres', 'VACUUM m');
like(info($primary, 'm_bf'), qr/^1 (?!A move)/, 'VACUUM finished the move: one layer');
cmp_ok($primary->safe_psql('postgres', q{SELECT pg_relation_size('m_bf')}),
	'<', $size_before, 'and gave the pages after it back');
is( $primary->safe_psql('postgres',
		q{SELECT bloom_index_verify('m_bf') + committed_missing('m_bf', 21, 22)}),
	'0', 'after the finished move every key is found');
$primary->safe_psql('postgres', q{CALL writer('m', 21, 500)});
is( $primary->safe_psql('postgres',
		q{SELECT bloom_index_verify('m_bf') + committed_missing('m_bf', 21, 22)}),
	'0', 'inserts go on after it, and are found');

#
# 4. Moves while large batches are being set: two sessions insert 32,768 new
#    keys per transaction (one batch of hashes, set at once under the
#    metapage's lock) and delete their batches older than the last three,
#    and the test runs VACUUM over and over: each compacts the index (it has
#    grown) and moves the new layer down, which copies its pages.  A batch
#    set in the layer being copied must be wholly in the copy: after every
#    VACUUM, every live row's key is found.  (The table's truncation is off:
#    VACUUM would wait for the writers' locks for seconds each time, to give
#    back the heap's empty tail; parts 3 and 5 truncate the index.)
#
$primary->safe_psql(
	'postgres', q{
CREATE TABLE batches (k bigint, b int);
CREATE INDEX batches_bf ON batches USING bloomfilter (k) WITH (capacity = 1000);
ALTER TABLE batches SET (vacuum_truncate = false);
CREATE PROCEDURE batch_writer(w int) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. 100000 LOOP
		INSERT INTO batches SELECT w * 10000000000::bigint + i * 100000::bigint + g, i
			FROM generate_series(1, 32768) g;
		COMMIT;
		DELETE FROM batches WHERE b = i - 3 AND k / 10000000000 = w;
		COMMIT;
		EXIT WHEN EXISTS (SELECT FROM stop);
	END LOOP;
END $$;
});
my @batchers =
  map { start_session($primary, "b$_", "CALL batch_writer($_)") } 1 .. 2;
ok($primary->poll_query_until('postgres', q{SELECT count(*) > 100000 FROM batches}),
	'batch writers under way');
my ($batch_vacuums, $batch_compactions, @batch_missing) = (0, 0);
for my $round (1 .. 15)
{
	my ($before) = split / /, info($primary, 'batches_bf');
	# (every page scanned: the live rows are counted, and the compaction
	# sizes its layer for them, not for all the keys the index has seen)
	$primary->safe_psql('postgres', 'VACUUM (DISABLE_PAGE_SKIPPING) batches');
	$batch_vacuums++;
	$batch_compactions++ if $before > 1;
	my $missing = $primary->safe_psql('postgres', q{SELECT bloom_index_verify('batches_bf')});
	push @batch_missing, "VACUUM $round: $missing" if $missing ne '0';
}
$primary->safe_psql('postgres', 'INSERT INTO stop VALUES (true)');
stop_sessions(@batchers);
is(join('', map { ${ $_->{err} } } @batchers), '', 'batch writers ended without an error');
cmp_ok($batch_compactions, '>=', 3,
	"$batch_compactions of $batch_vacuums VACUUMs compacted the index of the batches");
is(join(', ', @batch_missing), '', 'after every VACUUM every live row\'s key is found');
$primary->safe_psql('postgres', 'TRUNCATE stop');

#
# 5. Eight writers, VACUUM over and over, checks on the primary and the
#    standby throughout
#
$primary->safe_psql(
	'postgres', q{
CREATE TABLE live (k bigint, who int);
INSERT INTO live SELECT g, 0 FROM generate_series(1, 100000) g;
CREATE INDEX live_bf ON live USING bloomfilter (k) WITH (capacity = 1000);
VACUUM (INDEX_CLEANUP off) live;
CREATE TABLE checks (at timestamptz, missing bigint, committed_missing bigint);
CREATE PROCEDURE checker() LANGUAGE plpgsql AS $$
BEGIN
	LOOP
		INSERT INTO checks SELECT clock_timestamp(), bloom_index_verify('live_bf'),
			committed_missing('live_bf', 11, 18);
		COMMIT;
		EXIT WHEN EXISTS (SELECT FROM stop);
	END LOOP;
END $$;
});
my @sessions =
  map { start_session($primary, "w$_", "CALL writer('live', $_, 100000000, 10, 0.02)") } 11 .. 18;
push @sessions, start_session($primary, 'checker', 'CALL checker()');

my $standby_check = q{SELECT bloom_index_verify('live_bf') || ' ' || committed_missing('live_bf', 11, 18)};
my ($compactions, $rounds, $standby_checks, @standby_failures) = (0, 0, 0);
while ($compactions < 5 && $rounds < 50)
{
	$rounds++;
	# the writers have grown the index by a layer
	$primary->poll_query_until('postgres',
		q{SELECT layers > 1 FROM bloom_index_info('live_bf')})
	  or last;
	$compactions++;
	# (slowed less than the crashes' VACUUMs: the writers go on throughout,
	# and the table grows by the minute)
	my $vac = start_vacuum($primary, 'vacuum_live', 'live',
		'SET vacuum_cost_delay = 1', 'SET vacuum_cost_limit = 5',
		q{SET wal_consistency_checking = 'generic'});
	while ($vac->{h}->pumpable)
	{
		my ($ret, $out, $err) = $standby->psql('postgres', $standby_check);
		$standby_checks++;
		push @standby_failures, "exit $ret: $out $err" if $ret != 0 || $out ne '0 0';
		$vac->{h}->pump_nb;
	}
	stop_sessions($vac);
	is(${ $vac->{err} }, '', "VACUUM $rounds ended without an error");
}
is($compactions, 5, 'five compactions under eight writers');
$primary->safe_psql('postgres', 'INSERT INTO stop VALUES (true)');
stop_sessions(@sessions);
is(join('', map { ${ $_->{err} } } @sessions), '', 'writers and checker ended without an error');
my ($nchecks, $missing) = split /\|/, $primary->safe_psql('postgres',
	q{SELECT count(*), sum(missing + committed_missing) FROM checks});
cmp_ok($nchecks, '>=', 5, "the checker ran $nchecks times");
is($missing, '0', 'every check on the primary found every key');
is($primary->safe_psql('postgres',
		q{SELECT bloom_index_verify('live_bf') + committed_missing('live_bf', 11, 18)}),
	'0', 'at the end every key the writers committed is found');
cmp_ok($standby_checks, '>=', 5, "the standby was checked $standby_checks times during the VACUUMs");
is(join("\n", @standby_failures), '', 'every check on the standby found every key, without an error');

#
# 6. The standby, caught up
#
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $answers = q{
SELECT md5(string_agg(bloom_index_contains('live_bf', g)::int::text, '' ORDER BY g))
    || ' ' || md5(string_agg(bloom_index_contains('keys_bf', g)::int::text, '' ORDER BY g))
FROM generate_series(11000000000, 11000000000 + 199999) g};
is($standby->safe_psql('postgres', $answers),
	$primary->safe_psql('postgres', $answers),
	'the standby answers 2 x 200,000 probes as the primary');
is( $standby->safe_psql('postgres',
		q{SELECT bloom_index_verify('live_bf') + bloom_index_verify('keys_bf') + bloom_index_verify('m_bf')}),
	'0', 'the standby verifies 0');
is(info($standby, 'live_bf'), info($primary, 'live_bf'), 'the standby has the layers of the primary');
unlike(slurp_file($standby->logfile), qr/inconsistent page/,
	'the standby replayed the compactions\' records consistently');

$standby->stop;
$primary->stop;
done_testing();
