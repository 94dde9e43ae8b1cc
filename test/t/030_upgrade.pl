
# Copyright (c) 2026, the bloomfilter developers

# The upgrade path.
#
# 1. The extension scripts in sql/ pass the hygiene rules of DEVELOPER.md
#    (no CREATE OR REPLACE in install scripts, explicit volatility and
#    PARALLEL labels, ...), the default version has a full install script,
#    and what is installed is what the tree holds.
# 2. Against the installed scripts: every version is found in
#    pg_available_extension_versions, the oldest is installed and walked to
#    the default version one ALTER EXTENSION UPDATE TO step at a time, every
#    single upgrade script is run (install A, update to B, update to the
#    default), and each result's catalog (BloomCatalog::catalog_dump) must
#    equal that of a fresh CREATE EXTENSION of the default version.
# 3. The same walker against a throwaway installation that has two more
#    versions (1.0 -> 1.0.1 -> 1.0.2, a label fix, a new function, a new
#    operator): a private copy of the server binaries whose share directory
#    holds the fake scripts, so the shared installation is never touched.
#    It must pass, and it must fail, naming the object, once an upgrade
#    script forgets a change.

use strict;
use warnings;

use File::Basename qw(basename dirname);
use File::Path qw(make_path);
use FindBin;
use lib $FindBin::RealBin;

use BloomCatalog;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# --- helpers ----------------------------------------------------------------

# Compare dotted numeric versions ("1.0" < "1.0.1" < "1.2" < "1.10").
sub version_cmp
{
	my ($x, $y) = @_;
	for my $v ($x, $y)
	{
		die "version \"$v\" is not dotted numbers; teach version_cmp its order"
		  unless $v =~ /^\d+(?:\.\d+)*$/;
	}
	my @x = split /\./, $x;
	my @y = split /\./, $y;
	while (@x || @y)
	{
		my $c = (shift(@x) // 0) <=> (shift(@y) // 0);
		return $c if $c;
	}
	return 0;
}

sub slurp
{
	my ($path) = @_;
	open my $fh, '<', $path or die "cannot read $path: $!";
	local $/;
	my $s = <$fh>;
	close $fh;
	return $s;
}

sub spew
{
	my ($path, $content) = @_;
	open my $fh, '>', $path or die "cannot write $path: $!";
	print $fh $content;
	close $fh or die "cannot write $path: $!";
}

my $dbseq = 0;

# A new empty database on $node; returns its name.
sub new_db
{
	my ($node, $what) = @_;
	my $db = sprintf('%s_%d', $what, ++$dbseq);
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	return $db;
}

sub extversion
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		"SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'");
}

#
# The walker.  Runs its checks as subtests named after $label and returns
# the catalog differences it found, '' when every walked install matches the
# fresh install of the default version.  With $expect_clean false (a test of
# the walker itself) the differences are only returned.
#
sub walk_upgrades
{
	my ($node, $label, $expect_clean) = @_;
	$expect_clean //= 1;
	my @diffs;

	my $default = $node->safe_psql('postgres',
		"SELECT default_version FROM pg_available_extensions WHERE name = 'bloomfilter'");
	my @versions = sort { version_cmp($a, $b) } split /\n/,
	  $node->safe_psql('postgres',
		"SELECT version FROM pg_available_extension_versions WHERE name = 'bloomfilter'");
	ok(scalar(grep { $_ eq $default } @versions),
		"$label: default version $default is among the versions (@versions)");
	is(version_cmp($versions[-1], $default), 0,
		"$label: the default version $default is the newest");

	# fresh install of the default version
	my $fresh_db = new_db($node, 'fresh');
	$node->safe_psql($fresh_db, 'CREATE EXTENSION bloomfilter');
	is(extversion($node, $fresh_db), $default,
		"$label: CREATE EXTENSION installs $default");
	my $fresh = BloomCatalog::catalog_dump($node, $fresh_db);

	# every version reaches the default one
	foreach my $v (grep { $_ ne $default } @versions)
	{
		my $path = $node->safe_psql('postgres',
			"SELECT path FROM pg_extension_update_paths('bloomfilter') "
			  . "WHERE source = '$v' AND target = '$default'");
		isnt($path, '', "$label: $v has an update path to $default ($path)");
	}

	# the oldest version, walked one step at a time
	my $oldest = $versions[0];
	my $walk_db = new_db($node, 'walk');
	$node->safe_psql($walk_db,
		"CREATE EXTENSION bloomfilter VERSION '$oldest'");
	is(extversion($node, $walk_db), $oldest,
		"$label: installed the oldest version, $oldest");
	my @steps;
	if ($oldest ne $default)
	{
		my $path = $node->safe_psql('postgres',
			"SELECT path FROM pg_extension_update_paths('bloomfilter') "
			  . "WHERE source = '$oldest' AND target = '$default'");
		@steps = split /--/, $path;
		shift @steps;
	}
	foreach my $step (@steps)
	{
		$node->safe_psql($walk_db,
			"ALTER EXTENSION bloomfilter UPDATE TO '$step'");
		is(extversion($node, $walk_db), $step,
			"$label: ALTER EXTENSION bloomfilter UPDATE TO '$step'");
	}
	note "$label: walked $oldest"
	  . join('', map { " -> $_" } @steps)
	  . (@steps ? '' : ' (the only version: nothing to walk)');
	my $diff = BloomCatalog::diff_lines($fresh,
		BloomCatalog::catalog_dump($node, $walk_db));
	push @diffs, "walk from $oldest:\n$diff" if $diff ne '';
	is($diff, '',
		"$label: $oldest walked to $default has the catalog of a fresh $default")
	  if $expect_clean;

	# the walked extension works
	is( $node->safe_psql(
			$walk_db,
			"SELECT bloom_contains(bloom_add(bloom_create(100), 42), 42), "
			  . "bloom_contains(bloom_agg(g), 7) FROM generate_series(1, 10) g"),
		't|t',
		"$label: the walked extension works");

	# every single upgrade script: install its source version, run it,
	# update to the default, compare
	my @edges = split /\n/,
	  $node->safe_psql('postgres',
		"SELECT source || ' ' || target FROM pg_extension_update_paths('bloomfilter') "
		  . "WHERE path = source || '--' || target ORDER BY 1");
	foreach my $edge (@edges)
	{
		my ($from, $to) = split / /, $edge;
		my $db = new_db($node, 'step');
		$node->safe_psql($db, "CREATE EXTENSION bloomfilter VERSION '$from'");
		$node->safe_psql($db, "ALTER EXTENSION bloomfilter UPDATE TO '$to'");
		$node->safe_psql($db, 'ALTER EXTENSION bloomfilter UPDATE')
		  if $to ne $default;
		my $d = BloomCatalog::diff_lines($fresh,
			BloomCatalog::catalog_dump($node, $db));
		push @diffs, "script bloomfilter--$from--$to.sql:\n$d" if $d ne '';
		is($d, '',
			"$label: bloomfilter--$from--$to.sql, then on to $default, gives a fresh $default"
		) if $expect_clean;
	}
	note "$label: " . scalar(@edges) . " upgrade script(s)";

	return join("\n", @diffs);
}

# --- 1. the scripts in the tree ---------------------------------------------

my @tree_scripts = sort glob('sql/bloomfilter--*.sql');
ok(scalar(@tree_scripts), 'the tree has extension scripts in sql/');
foreach my $script (@tree_scripts)
{
	is(join("\n", BloomCatalog::lint_script($script)),
		'', "$script follows the script rules");
}

my ($tree_default) =
  slurp('bloomfilter.control') =~ /^\s*default_version\s*=\s*'([^']*)'/m;
ok(defined $tree_default, 'bloomfilter.control has a default_version');
ok(-f "sql/bloomfilter--$tree_default.sql",
	"the default version $tree_default has a full install script");

# the rules catch what they are meant to catch
{
	my $dir = PostgreSQL::Test::Utils::tempdir();
	spew("$dir/bloomfilter--9.9.sql", <<'EOS');
\echo Use "CREATE EXTENSION bloomfilter" to load this file. \quit
CREATE OR REPLACE FUNCTION f1(int) RETURNS int
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT;
CREATE FUNCTION f2(int) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
	AS $$ SELECT 1; SELECT 'STABLE PARALLEL SAFE' $$;
CREATE FUNCTION f3(int) RETURNS int
	AS '$libdir/bloomfilter', 'f3' LANGUAGE C STABLE PARALLEL SAFE SECURITY DEFINER;
CREATE FUNCTION f4(int) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
	BEGIN ATOMIC SELECT 1; END;
CREATE AGGREGATE a1(int) (SFUNC = int4pl, STYPE = int);
EOS
	spew("$dir/bloomfilter--9.9--9.10.sql", <<'EOS');
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '9.10'" to load this file. \quit
CREATE OR REPLACE FUNCTION f1(int) RETURNS int
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
ALTER FUNCTION f2(int) STABLE;
EOS
	is( join("\n", BloomCatalog::lint_script("$dir/bloomfilter--9.9.sql")),
		join("\n",
			'bloomfilter--9.9.sql: CREATE OR REPLACE in an install script: CREATE OR REPLACE FUNCTION f1(int) RETURNS',
			'bloomfilter--9.9.sql: function f1 does not state PARALLEL SAFE, RESTRICTED or UNSAFE',
			'bloomfilter--9.9.sql: sql function f2 has neither BEGIN ATOMIC nor SET search_path',
			'bloomfilter--9.9.sql: function f3 is SECURITY DEFINER',
			"bloomfilter--9.9.sql: C function f3 does not use AS 'MODULE_PATHNAME'",
			'bloomfilter--9.9.sql: aggregate a1 does not state PARALLEL'),
		'the script rules find each broken rule in a bad install script');
	is(join("\n", BloomCatalog::lint_script("$dir/bloomfilter--9.9--9.10.sql")),
		'', 'an upgrade script may replace a function the extension owns');
}

# --- 2. the installed scripts ---------------------------------------------

my $node = PostgreSQL::Test::Cluster->new('real');
$node->init;
$node->start;

my $sharedir = $node->config_data('--sharedir');
my @installed = sort map { basename($_) }
  glob("$sharedir/extension/bloomfilter--*.sql");
is( join(' ', @installed),
	join(' ', map { basename($_) } @tree_scripts),
	"the installation holds exactly the tree's scripts (make install)");
foreach my $script (@installed)
{
	next unless -f "sql/$script";
	ok(slurp("$sharedir/extension/$script") eq slurp("sql/$script"),
		"installed $script is the tree's");
}
is( $node->safe_psql('postgres',
		"SELECT default_version FROM pg_available_extensions WHERE name = 'bloomfilter'"),
	$tree_default,
	'the installed control file has the default version of the tree');

is(walk_upgrades($node, 'installed'), '', 'installed: no catalog differences');
$node->stop;

# --- 3. a throwaway installation with versions 1.0.1 and 1.0.2 ------------

#
# PostgreSQL finds its share and lib directories relative to its own binary,
# so a copy of bin/ under a new root, with share/ and lib/ rebuilt there out
# of symbolic links, is a complete installation of its own whose extension
# directory can hold scripts that nobody else sees.
#
my $root = PostgreSQL::Test::Utils::tempdir();
my ($bindir, $pkglibdir) = map { $node->config_data($_) } ('--bindir', '--pkglibdir');
my $fake_ext = "$root$sharedir/extension";

make_path(dirname("$root$bindir"), "$root$pkglibdir", $fake_ext);
system('cp', '-a', $bindir, "$root$bindir") == 0
  or die "could not copy $bindir";
foreach my $f (glob("$pkglibdir/*"))
{
	symlink($f, "$root$pkglibdir/" . basename($f)) or die "symlink $f: $!";
}
foreach my $f (glob("$sharedir/*"))
{
	next if basename($f) eq 'extension';
	symlink($f, "$root$sharedir/" . basename($f)) or die "symlink $f: $!";
}
foreach my $f (glob("$sharedir/extension/*"))
{
	next if basename($f) =~ /^bloomfilter[.-]/;
	symlink($f, "$fake_ext/" . basename($f)) or die "symlink $f: $!";
}

my $base_sql = slurp("$sharedir/extension/bloomfilter--1.0.sql");
my $control  = slurp("$sharedir/extension/bloomfilter.control");
$control =~ s/^(\s*default_version\s*=\s*)'[^']*'/$1'1.0.2'/m
  or die 'no default_version in bloomfilter.control';
spew("$fake_ext/bloomfilter.control", $control);
spew("$fake_ext/bloomfilter--1.0.sql", $base_sql);

# 1.0 -> 1.0.1: a label fix and a new function
my $step1 = <<'EOS';
/* sql/bloomfilter--1.0--1.0.1.sql (test only) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.0.1'" to load this file. \quit

ALTER FUNCTION bloom_false_positive_rate(bloom) STABLE;

CREATE FUNCTION bloom_estimate(filter bloom) RETURNS float8
	AS 'MODULE_PATHNAME', 'bf_cardinality' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION bloom_estimate(bloom) IS 'estimated number of distinct keys';
EOS

# 1.0.1 -> 1.0.2: a new operator
my $step2 = <<'EOS';
/* sql/bloomfilter--1.0.1--1.0.2.sql (test only) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.0.2'" to load this file. \quit

CREATE OPERATOR @> (
	LEFTARG = bloom,
	RIGHTARG = anyelement,
	FUNCTION = bloom_contains
);

COMMENT ON OPERATOR @> (bloom, anyelement) IS 'the filter may contain the key';
EOS

# the full 1.0.2 script: the label fix written in place, the rest appended
my $full = $base_sql;
$full =~ s{^/\* sql/bloomfilter--1\.0\.sql \*/}{/* sql/bloomfilter--1.0.2.sql (test only) */}m
  or die 'no header line in bloomfilter--1.0.sql';
$full =~ s/(CREATE FUNCTION bloom_false_positive_rate\(filter bloom\) RETURNS float8\s+AS 'MODULE_PATHNAME' LANGUAGE C )IMMUTABLE /${1}STABLE /
  or die 'bloom_false_positive_rate is not declared as expected in bloomfilter--1.0.sql';
foreach my $step ($step1, $step2)
{
	(my $body = $step) =~ s{^/\*.*?\*/\n|^--[^\n]*\n|^\\echo[^\n]*\n}{}mg;
	$full .= "\n-- added after 1.0\n$body";
}
spew("$fake_ext/bloomfilter--1.0--1.0.1.sql",   $step1);
spew("$fake_ext/bloomfilter--1.0.1--1.0.2.sql", $step2);
spew("$fake_ext/bloomfilter--1.0.2.sql",        $full);

foreach my $script (sort glob("$fake_ext/bloomfilter--*.sql"))
{
	is(join("\n", BloomCatalog::lint_script($script)),
		'', 'fake ' . basename($script) . ' follows the script rules');
}

my $fake = PostgreSQL::Test::Cluster->new('fake',
	install_path => dirname("$root$bindir"));
$fake->init;
$fake->start;
is($fake->config_data('--sharedir'),
	"$root$sharedir", 'the throwaway installation has its own share directory');
is( $fake->safe_psql('postgres',
		"SELECT string_agg(version, ' ' ORDER BY version) FROM pg_available_extension_versions WHERE name = 'bloomfilter'"),
	'1.0 1.0.1 1.0.2',
	'the throwaway installation offers 1.0, 1.0.1 and 1.0.2');

is(walk_upgrades($fake, 'fake'), '', 'fake: no catalog differences');

# the fake steps changed something, so the walk was not trivially equal
{
	my $db = new_db($fake, 'plain');
	$fake->safe_psql($db, "CREATE EXTENSION bloomfilter VERSION '1.0'");
	my $d = BloomCatalog::diff_lines(
		BloomCatalog::catalog_dump($fake, $db),
		do
		{
			$fake->safe_psql($db, 'ALTER EXTENSION bloomfilter UPDATE');
			BloomCatalog::catalog_dump($fake, $db);
		});
	like($d, qr/^\+ function public\.bloom_false_positive_rate\(public\.bloom\): .*volatility=s /m,
		'fake: 1.0 -> 1.0.2 changes a label');
	like($d, qr/^\+ member function public\.bloom_estimate\(public\.bloom\)$/m,
		'fake: 1.0 -> 1.0.2 adds a function');
	like($d, qr/^\+ member operator public\.@>\(public\.bloom,anyelement\)$/m,
		'fake: 1.0 -> 1.0.2 adds an operator');
}

# the owner of a database, not a superuser, walks the chain too: the scripts
# of a trusted extension run as the bootstrap superuser, and give the same
# catalog
{
	$fake->safe_psql('postgres',
		'CREATE ROLE dbowner LOGIN; CREATE DATABASE ownerdb OWNER dbowner');
	my @as_owner = (extra_params => [ '-U', 'dbowner' ]);
	$fake->safe_psql('ownerdb', "CREATE EXTENSION bloomfilter VERSION '1.0'", @as_owner);
	$fake->safe_psql('ownerdb', "ALTER EXTENSION bloomfilter UPDATE TO '1.0.1'", @as_owner);
	$fake->safe_psql('ownerdb', "ALTER EXTENSION bloomfilter UPDATE TO '1.0.2'", @as_owner);
	my $fresh_db = new_db($fake, 'fresh');
	$fake->safe_psql($fresh_db, 'CREATE EXTENSION bloomfilter');
	is( BloomCatalog::diff_lines(
			BloomCatalog::catalog_dump($fake, $fresh_db),
			BloomCatalog::catalog_dump($fake, 'ownerdb')),
		'',
		'fake: a non-superuser database owner walks 1.0 -> 1.0.2 to the catalog of a fresh 1.0.2'
	);
}

# an upgrade script that forgets the label fix is caught, by name
(my $forgetful = $step1) =~ s/^ALTER FUNCTION bloom_false_positive_rate.*\n//m;
spew("$fake_ext/bloomfilter--1.0--1.0.1.sql", $forgetful);
my $caught = walk_upgrades($fake, 'fake, forgetful 1.0--1.0.1', 0);
like(
	$caught,
	qr/^- function public\.bloom_false_positive_rate\(public\.bloom\): .*volatility=s /m,
	'a forgotten ALTER FUNCTION in an upgrade script shows as a catalog difference');

# and so is one that forgets a comment
spew("$fake_ext/bloomfilter--1.0--1.0.1.sql",
	$step1 =~ s/^COMMENT ON FUNCTION bloom_estimate.*\n//mr);
$caught = walk_upgrades($fake, 'fake, no comment in 1.0--1.0.1', 0);
like($caught, qr/^- function public\.bloom_estimate\(public\.bloom\): .*comment=estimated number of distinct keys$/m,
	'a forgotten COMMENT in an upgrade script shows as a catalog difference');

$fake->stop;

done_testing();
