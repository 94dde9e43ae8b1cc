
# Copyright (c) 2026, the bloomfilter developers

=pod

=head1 NAME

BloomSessions - background psql sessions for the bloomfilter TAP tests

=head1 SYNOPSIS

  use FindBin;
  use lib $FindBin::RealBin;
  use BloomSessions qw(start_session stop_sessions);

  my @sessions = map { start_session($node, "w$_", "CALL writer($_)") } 1 .. 4;
  ... crash, cancel or wait for them ...
  stop_sessions(@sessions);
  like(${ $_->{err} }, qr/terminating connection/) for @sessions;

=head1 DESCRIPTION

The crash, standby and index tests keep several sessions writing while they
kill a backend, shut the server down or rebuild an index under them.  Each
session is a psql run in the background with IPC::Run, named by its
application_name so that the test can find its backend in pg_stat_activity.

=cut

package BloomSessions;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;

our @EXPORT_OK = qw(start_session stop_sessions);

=pod

=over

=item start_session($node, $name, $sql)

Starts a psql (the node's installation's) running $sql in database postgres
of $node, with ON_ERROR_STOP and application_name $name, in the background,
and returns the session: a hash of name, h (the IPC::Run harness), out and
err (references to what the psql has written to its standard output and
standard error so far).

=cut

sub start_session
{
	my ($node, $name, $sql) = @_;
	my ($in, $out, $err) = ('', '', '');
	my $h = IPC::Run::start(
		[
			$node->installed_command('psql'), '-X', '-v', 'ON_ERROR_STOP=1',
			'-c', $sql,
			'-d', $node->connstr('postgres') . " application_name=$name"
		],
		'<', \$in, '>', \$out, '2>', \$err);
	return { name => $name, h => $h, out => \$out, err => \$err };
}

=pod

=item stop_sessions(@sessions)

Waits for each session's psql to end (the test has cut its connection off:
crashed or stopped the server, or cancelled its query), and kills one that
is still running after that.  How a session ended is not checked here: the
caller looks at its err where that matters.

=back

=cut

sub stop_sessions
{
	for my $s (@_)
	{
		# should finish throw instead of returning, the harness may be left
		# with its psql running: kill that
		eval { $s->{h}->finish; };
		$s->{h}->kill_kill if $s->{h}->pumpable;
	}
	return;
}

1;
