# test/perl/ShardidTest.pm: what shardid's TAP tests share.
package ShardidTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;

our @EXPORT = qw(shardid_node sql_error);

# A new, initialised node (not started) with shardid preloaded, UTC, no
# fsync, and any further postgresql.conf lines given.
sub shardid_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		join("\n",
			"shared_preload_libraries = 'shardid'",
			"timezone = 'UTC'", 'fsync = off', @conf)
		  . "\n");
	return $node;
}

# Run $sql on $node expecting an error; return "SQLSTATE: message", or
# "no error".
sub sql_error
{
	my ($node, $sql) = @_;
	my ($stdout, $stderr);
	my $rc = $node->psql(
		'postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$stdout,
		stderr => \$stderr);
	return 'no error' if $rc == 0;
	return $1 if $stderr =~ /ERROR:\s+(\w{5}: [^\n]*)/;
	return "unexpected: $stderr";
}

1;
