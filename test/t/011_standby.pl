#
# test/t/011_standby.pl: a streaming standby replays filter changes and
# answers as the primary does.
#
# A primary and a hot standby (streaming replication over the test's local
# socket), the standby made from a base backup taken before
# CREATE EXTENSION, so it replays everything.  On the primary:
#
#   phase 1: bulk builds (unsized and sized bloom_agg, up to 12 MB, and one
#            rolled back), three concurrent sessions each committing 400
#            small updates (bloom_add, bloom_add_new under FOR UPDATE, |;
#            test/t/data/writers.sql), a roll-up with bloom_union_agg, an
#            intersection, a DELETE and a VACUUM;
#   phase 2: the same writers again with a bulk build in flight, and a
#            SIGKILL of the bulk build's backend: the primary recovers, the
#            standby reconnects and replays what follows.
#
# After each phase, once the standby has replayed up to the primary's
# current WAL position:
#   - every filter has the same bytes (md5 of f::bytea) and the same
#     bloom_info on both;
#   - both give the same answers for 20,000 probes per filter (false
#     positives included) and find every committed key;
#   - on the standby every filter is valid and is bit for bit the filter
#     of its committed keys.
# Finally the standby is promoted and takes a write.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename qw(dirname);

use FindBin;
use lib $FindBin::RealBin;
use BloomSessions qw(start_session stop_sessions);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
shared_buffers = 32MB
max_connections = 20
restart_after_crash = on
log_statement = none
});
$primary->start;
# a slot, so that the primary keeps the WAL (hundreds of MB: every update
# rewrites a whole filter) until the standby has it
$primary->safe_psql('postgres',
	q{SELECT pg_create_physical_replication_slot('standby')});
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf(
	'postgresql.conf', q{
primary_slot_name = 'standby'
hot_standby_feedback = on
log_statement = none
});
$standby->start;

$primary->safe_psql('postgres',
	"CREATE EXTENSION bloomfilter;\n"
	  . slurp_file(dirname(__FILE__) . '/data/writers.sql'));

# What both servers must answer alike: per filter its bytes, its header and
# estimates, how many of 20,000 probes it answers "maybe" to, and how many
# of its committed keys it finds (a bulk filter's keys are 1 .. nkeys).
# Each server counts on its own: the standby's count comes from its replayed
# filter, so a key lost in replay shows as a difference.
my $answers = q{
SELECT id, md5(f::bytea), i.nblocks, i.nhashes, i.key_family, i.bits_set,
       i.estimated_keys, i.over_capacity,
       (SELECT count(*) FROM generate_series(1, 20000) AS g
        WHERE bloom_contains(f, g::bigint)) AS maybe,
       (SELECT count(*) FROM key_log AS l
        WHERE l.id = t.id AND bloom_contains(t.f, l.key)) AS found,
       (SELECT count(*) FROM key_log AS l WHERE l.id = t.id) AS logged
FROM filters AS t, LATERAL bloom_info(t.f) AS i
UNION ALL
SELECT 1000 + id, md5(f::bytea), i.nblocks, i.nhashes, i.key_family, i.bits_set,
       i.estimated_keys, i.over_capacity,
       (SELECT count(*) FROM generate_series(1, 20000) AS g
        WHERE CASE WHEN i.key_family = 'text' THEN bloom_contains(f, g::text)
                   ELSE bloom_contains(f, g::bigint) END),
       (SELECT count(*) FROM generate_series(1, t.nkeys) AS g
        WHERE CASE WHEN i.key_family = 'text' THEN bloom_contains(f, g::text)
                   ELSE bloom_contains(f, g::bigint) END),
       nkeys
FROM bulk AS t, LATERAL bloom_info(t.f) AS i
ORDER BY 1};

sub compare
{
	my ($label) = @_;

	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

	my $on_primary = $primary->safe_psql('postgres', $answers);
	my $on_standby = $standby->safe_psql('postgres', $answers);
	is($on_standby, $on_primary,
		"$label: same bytes, headers and answers on both");
	my $rows = () = $on_primary =~ /\n/g;
	cmp_ok($rows + 1, '>=', 14, "$label: compared " . ($rows + 1) . ' filters');

	is( $standby->safe_psql(
			'postgres', q{
SELECT count(*) FROM key_log AS l JOIN filters AS f USING (id)
WHERE NOT bloom_contains(f.f, l.key)}),
		'0',
		"$label: every committed key is in its filter on the standby");
	is( $standby->safe_psql(
			'postgres', q{
SELECT count(*) FROM bulk AS t, LATERAL bloom_info(t.f) AS i
WHERE t.nkeys <> (SELECT count(*) FROM generate_series(1, t.nkeys) AS g
                  WHERE CASE WHEN i.key_family = 'text' THEN bloom_contains(t.f, g::text)
                             ELSE bloom_contains(t.f, g::bigint) END)}),
		'0',
		"$label: every key of the bulk builds is in its filter on the standby");

	is( $standby->safe_psql(
			'postgres', q{
SELECT count(*) FILTER (WHERE f::text::bloom::bytea <> f::bytea
                           OR f::bytea::bloom::bytea <> f::bytea),
       count(*) FILTER (WHERE f <> r.rebuilt)
FROM filters AS f,
     LATERAL (SELECT bloom_agg(l.key, f.capacity, f.rate) AS rebuilt
              FROM key_log AS l WHERE l.id = f.id) AS r}),
		'0|0',
		"$label: on the standby every filter is valid and exactly the filter of its committed keys"
	);
	return;
}

#
# Phase 1
#
$primary->safe_psql(
	'postgres', q{
INSERT INTO bulk SELECT 1, 1000000, bloom_agg(g) FROM generate_series(1, 1000000) AS g;
INSERT INTO bulk SELECT 2, 1000000, bloom_agg(g, 10000000, 0.01) FROM generate_series(1, 1000000) AS g;
INSERT INTO bulk SELECT 3, 1000, bloom_agg(g::text) FROM generate_series(1, 1000) AS g;
BEGIN;
INSERT INTO bulk SELECT 4, 1000000, bloom_agg(g) FROM generate_series(1, 1000000) AS g;
ROLLBACK;
});

my @sessions = map {
	start_session($primary, "upd$_",
		"CALL add_keys($_, 1, 400, ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13])")
} 1 .. 3;
for my $s (@sessions)
{
	ok($s->{h}->finish, "phase 1: session $s->{name} committed its updates")
	  or diag ${ $s->{err} };
}

$primary->safe_psql(
	'postgres', q{
-- a roll-up of the 122 KB filters: bit for bit the filter of all their keys
INSERT INTO filters
SELECT 20, 100000, 0.01, bloom_union_agg(f) FROM filters WHERE id BETWEEN 7 AND 12;
INSERT INTO key_log SELECT 20, key, 1 FROM key_log WHERE id BETWEEN 7 AND 12;
-- an intersection (not the filter of any key set: kept with the bulk builds)
INSERT INTO bulk SELECT 5, 0, a.f & b.f FROM filters a, filters b WHERE a.id = 7 AND b.id = 8;
-- a filter dropped and its space vacuumed
INSERT INTO filters VALUES (22, 100000, 0.01, bloom_create(100000, 0.01));
DELETE FROM filters WHERE id = 22;
VACUUM filters;
});

compare('phase 1');

#
# Phase 2: a bulk build in flight and concurrent writers, then SIGKILL of
# the bulk build's backend.
#
@sessions = (
	start_session($primary, 'bulk',
		    'INSERT INTO bulk SELECT 100, 1000000000, '
		  . 'bloom_agg(g, 50000000, 0.01) '
		  . 'FROM (SELECT generate_series(1, 1000000000) AS g) AS s'),
	map {
		start_session($primary, "upd$_",
			"CALL add_keys($_, 2, 1000000, ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13])"
		)
	} 1 .. 3);
ok( $primary->poll_query_until(
		'postgres', q{
SELECT (SELECT count(*) FROM pg_stat_activity
        WHERE application_name = 'bulk' AND state = 'active'
          AND now() - query_start > interval '1 second') = 1
   AND (SELECT count(*) FROM key_log WHERE round = 2) >= 300}),
	'phase 2: bulk build and updaters under way');
my $committed = $primary->safe_psql('postgres',
	'SELECT count(*) FROM key_log WHERE round = 2');
my $pid = $primary->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE application_name = 'bulk'});
my $log_offset = -s $primary->logfile;
ok(kill('KILL', $pid), "phase 2: SIGKILL of the bulk build's backend $pid");
$primary->wait_for_log(qr/database system is ready to accept connections/,
	$log_offset);
stop_sessions(@sessions);
cmp_ok(
	$primary->safe_psql('postgres', 'SELECT count(*) FROM key_log WHERE round = 2'),
	'>=', $committed,
	"phase 2: the $committed keys committed before the kill are there");
is($primary->safe_psql('postgres', 'SELECT count(*) FROM bulk WHERE id = 100'),
	'0', 'phase 2: the bulk build in flight left nothing');

# more writes after the recovery, streamed to the reconnected standby
$primary->safe_psql('postgres',
	'CALL add_keys(4, 3, 200, ARRAY[1,2,3,4,5,6,7,8,9,10,11,12,13])');

compare('phase 2');

#
# The standby takes over.
#
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
is( $standby->safe_psql(
		'postgres', q{
UPDATE filters SET f = bloom_add(f, -42::bigint) WHERE id = 13;
SELECT bloom_contains(f, -42::bigint) FROM filters WHERE id = 13}),
	't',
	'the promoted standby takes a write');

$standby->stop;
$primary->stop;
done_testing();
