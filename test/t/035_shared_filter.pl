#
# test/t/035_shared_filter.pl: a shared filter without its keys
# (bloom_filter_*, issue 39) keeps every committed key through what
# PostgreSQL does to tables.
#
#   - a hot standby: probes on the standby find every key the primary
#     committed (single adds, batches, adds that grew a layer), not one the
#     primary rolled back; an add on the standby is refused (25006);
#   - pg_dump (custom format) and pg_restore into another database: every key
#     found, the same layers and counts, each exported layer the same bytes;
#   - a crash (immediate stop) and recovery: every committed key found,
#     a key of a transaction open at the crash not found.
#
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use BloomSessions qw(start_session stop_sessions);

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "log_statement = none\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION bloomfilter');
$primary->safe_psql('postgres',
	q{SELECT bloom_filter_create('public.seen', 2000, 0.01)});
$primary->safe_psql('postgres',
	q{SELECT bloom_filter_add('seen', array_agg(g)) FROM generate_series(1, 1000) g});
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# after the base backup: single adds, a batch that grows the filter, and a
# transaction rolled back
$primary->safe_psql('postgres',
	q{SELECT count(*) FILTER (WHERE bloom_filter_add('seen', g)) FROM generate_series(1001, 1500) g});
$primary->safe_psql('postgres',
	q{SELECT bloom_filter_add('seen', array_agg(g)) FROM generate_series(1501, 8000) g});
$primary->safe_psql('postgres',
	q{BEGIN; SELECT bloom_filter_add('seen', -1); ROLLBACK;});
$primary->wait_for_catchup($standby);

my $all_found = q{
SELECT bloom_filter_contains('seen', array_agg(g)) = array_fill(true, ARRAY[8000])
FROM generate_series(1, 8000) g};
my $info = q{SELECT layers, keys FROM bloom_filter_info('seen')};
my $export = q{SELECT string_agg(layer || ':' || md5(filter::bytea), ',' ORDER BY layer)
FROM bloom_filter_export('seen')};

is($standby->safe_psql('postgres', $all_found), 't',
	'the standby finds every key the primary committed');
is($standby->safe_psql('postgres', q{SELECT bloom_filter_contains('seen', -1)}),
	'f', 'the standby does not find the key the primary rolled back');
my $primary_info = $primary->safe_psql('postgres', $info);
like($primary_info, qr/^[2-9]\|/, "the filter grew on the primary ($primary_info)");
is($standby->safe_psql('postgres', $info), $primary_info,
	'the standby has the same layers and counts');
is($standby->safe_psql('postgres', $export),
	$primary->safe_psql('postgres', $export),
	'the standby exports the same bytes, layer by layer');
my ($ret, $stdout, $stderr) = $standby->psql('postgres',
	q{SELECT bloom_filter_add('seen', 9000)},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/25006/, 'an add on the standby is refused: read-only');
$standby->stop;

# dump and restore
my $tmp = PostgreSQL::Test::Utils::tempdir;
$primary->command_ok(
	[ 'pg_dump', '-Fc', '-f', "$tmp/seen.dump", '-d', $primary->connstr('postgres') ],
	'pg_dump of the database with the filter');
$primary->safe_psql('postgres', 'CREATE DATABASE restored');
$primary->command_ok(
	[ 'pg_restore', '-d', $primary->connstr('restored'), "$tmp/seen.dump" ],
	'pg_restore into another database');
is($primary->safe_psql('restored', $all_found), 't',
	'the restored filter finds every key');
is($primary->safe_psql('restored', $info), $primary_info,
	'the restored filter has the same layers and counts');
is($primary->safe_psql('restored', $export),
	$primary->safe_psql('postgres', $export),
	'the restored filter exports the same bytes, layer by layer');
is($primary->safe_psql('restored',
		q{SELECT bloom_filter_add('seen', 9001); SELECT bloom_filter_contains('seen', 9001)}),
	"t\nt", 'the restored filter takes adds');

# crash recovery: a transaction open at the crash leaves nothing
# (the open transaction holds the row of its key's slice: the committed
# batch goes first, or it would wait for that row)
$primary->safe_psql('postgres',
	q{SELECT bloom_filter_add('seen', array_agg(g)) FROM generate_series(8001, 9000) g});
my $open = start_session($primary, 'open',
	q{BEGIN; SELECT bloom_filter_add('seen', -2); SELECT pg_sleep(600);});
ok( $primary->poll_query_until(
		'postgres', q{
SELECT count(*) = 1 FROM pg_stat_activity
WHERE application_name = 'open' AND wait_event = 'PgSleep'}),
	'a transaction has added a key and is open');
$primary->stop('immediate');
stop_sessions($open);
$primary->start;
is($primary->safe_psql('postgres',
		q{SELECT bloom_filter_contains('seen', array_agg(g)) = array_fill(true, ARRAY[9000])
		  FROM generate_series(1, 9000) g}),
	't', 'after a crash every committed key is found');
is($primary->safe_psql('postgres', q{SELECT bloom_filter_contains('seen', -2)}),
	'f', 'after a crash the key of the open transaction is not found');

$primary->stop;
done_testing();
