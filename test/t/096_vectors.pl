# Copyright: see the shardid LICENSE.
#
# 096_vectors.pl: test/vectors/vectors.json, the vectors the client
# libraries (clients/js, clients/python) are tested against, still holds
# for the extension in this tree.  Every vector is checked: decodes with
# the default and other epochs, encodes, floors, horizons, shortcodes
# both ways, each refused input's SQLSTATE, and the public IDs under the
# spec's test keys (skipped, saying so, while the extension has no
# shardid_public).  The file is read with JSON::PP to count the vectors of
# each section, and by the server (pg_read_file) to check them in SQL, so
# no value is pasted into a query.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use FindBin;
use lib "$FindBin::RealBin/../perl";
use ShardidTest;

my $file = "$FindBin::RealBin/../vectors/vectors.json";
open my $fh, '<', $file or die "could not read \"$file\": $!";
my $vectors = JSON::PP->new->decode(do { local $/; <$fh> });
close $fh;

my $keys = $vectors->{public_ids}{keys};
my $node = shardid_node('vectors', "shardid.public_id_keys = '$keys'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION shardid');

# Helpers in pg_temp, then one query; prints "index|ok" or "index|what".
my $helpers = q{
SET timezone = 'UTC';
CREATE FUNCTION pg_temp.ts(ms bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT 'epoch'::timestamptz + d * interval '1 day' + (ms - d::bigint * 86400000) * interval '1 millisecond'
    FROM (SELECT floor(ms::numeric / 86400000)::int AS d) AS x $$;
CREATE FUNCTION pg_temp.ms(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT floor(extract(epoch FROM t) * 1000)::bigint $$;
CREATE FUNCTION pg_temp.iso(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN t BETWEEN '0001-01-01+00' AND '9999-12-31 23:59:59.999+00'
    THEN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END $$;
CREATE FUNCTION pg_temp.v(section text) RETURNS TABLE (i bigint, j jsonb) LANGUAGE sql AS $$
  SELECT i, j FROM jsonb_array_elements(
    pg_read_file(current_setting('vectors.file'))::jsonb #> string_to_array(section, '.'))
    WITH ORDINALITY AS a(j, i) $$;
-- The SQLSTATE a refused input raises, or 'no error'.
CREATE FUNCTION pg_temp.err(c jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  a jsonb := c->'args';
  e timestamptz;
BEGIN
  e := pg_temp.ts((a->>'epoch_ms')::bigint);
  CASE c->>'fn'
  WHEN 'decode' THEN
    IF e IS NULL THEN PERFORM shardid_decode((a->>'id')::bigint);
    ELSE PERFORM shardid_decode((a->>'id')::bigint, e); END IF;
  WHEN 'encode' THEN
    IF e IS NULL THEN PERFORM shardid_encode(pg_temp.ts((a->>'ms')::bigint), (a->>'shard')::int, (a->>'seq')::int);
    ELSE PERFORM shardid_encode(pg_temp.ts((a->>'ms')::bigint), (a->>'shard')::int, (a->>'seq')::int, e); END IF;
  WHEN 'floor' THEN
    IF e IS NULL THEN PERFORM shardid_floor(pg_temp.ts((a->>'ms')::bigint));
    ELSE PERFORM shardid_floor(pg_temp.ts((a->>'ms')::bigint), e); END IF;
  WHEN 'horizon' THEN
    IF a->>'epoch_ms' IS NULL THEN PERFORM shardid_horizon();
    ELSE PERFORM shardid_horizon(pg_temp.ts((a->>'epoch_ms')::bigint)); END IF;
  WHEN 'to_shortcode' THEN PERFORM shardid_to_shortcode((a->>'id')::bigint);
  WHEN 'from_shortcode' THEN PERFORM shardid_from_shortcode(a->>'code');
  WHEN 'to_public' THEN
    IF a->>'version' IS NULL THEN PERFORM shardid_public((a->>'id')::bigint);
    ELSE PERFORM shardid_public((a->>'id')::bigint, (a->>'version')::int); END IF;
  WHEN 'to_private' THEN PERFORM shardid_private(a->>'text');
  WHEN 'to_public_bigint' THEN PERFORM shardid_public_bigint((a->>'id')::bigint, (a->>'version')::int);
  WHEN 'to_private_bigint' THEN PERFORM shardid_private_bigint((a->>'c')::bigint, (a->>'version')::int);
  END CASE;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
};

# Run $sql in psql with the setting vectors.file naming the vectors file
# (a psql variable: quoted by psql, not pasted).
sub query
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', "SET vectors.file = :'vectors_file';\n$sql",
		extra_params => [ '-v', "vectors_file=$file" ]);
}

# Run $query (after the helpers) and check that it printed one line per
# vector of $section, each "ok".
sub check
{
	my ($section, $what, $query) = @_;
	my $n = $section =~ /^(\w+)\.(\w+)$/ ? scalar @{ $vectors->{$1}{$2} } : scalar @{ $vectors->{$section} };
	my $out = query("$helpers\n$query");
	my @lines = split /\n/, $out;
	my @bad = grep { !/^\d+\|ok$/ } @lines;
	cmp_ok($n, '>', 0, "$section: the file has vectors");
	is(scalar @lines, $n, "$section: all $n vectors checked");
	is(join("\n", @bad), '', "$section: $what");
}

check('decode', 'shardid_decode, shardid_shard, shardid_seq and shardid_created_at agree', q{
SELECT v.i, CASE WHEN (pg_temp.ms(d.created_at), d.shard, d.seq, pg_temp.iso(d.created_at),
                       shardid_shard(id), shardid_seq(id), pg_temp.ms(c))
    IS NOT DISTINCT FROM ((v.j->>'ms')::bigint, (v.j->>'shard')::int, (v.j->>'seq')::int, v.j->>'time',
                          (v.j->>'shard')::int, (v.j->>'seq')::int, (v.j->>'ms')::bigint)
  THEN 'ok' ELSE format('%s: got %s %s %s', v.j, pg_temp.ms(d.created_at), d.shard, d.seq) END
  FROM pg_temp.v('decode') AS v,
       LATERAL (SELECT (v.j->>'id')::bigint AS id, pg_temp.ts((v.j->>'epoch_ms')::bigint) AS e) AS p,
       LATERAL (SELECT * FROM shardid_decode(p.id) WHERE p.e IS NULL
                UNION ALL SELECT * FROM shardid_decode(p.id, p.e) WHERE p.e IS NOT NULL) AS d,
       LATERAL (SELECT CASE WHEN p.e IS NULL THEN shardid_created_at(p.id)
                            ELSE shardid_created_at(p.id, p.e) END AS c) AS x
 ORDER BY v.i;
});

check('encode', 'shardid_encode', q{
SELECT v.i, CASE WHEN got = (v.j->>'id')::bigint THEN 'ok' ELSE format('%s: got %s', v.j, got) END
  FROM pg_temp.v('encode') AS v,
       LATERAL (SELECT CASE WHEN v.j->>'epoch_ms' IS NULL
                  THEN shardid_encode(pg_temp.ts((v.j->>'ms')::bigint), (v.j->>'shard')::int, (v.j->>'seq')::int)
                  ELSE shardid_encode(pg_temp.ts((v.j->>'ms')::bigint), (v.j->>'shard')::int, (v.j->>'seq')::int,
                                      pg_temp.ts((v.j->>'epoch_ms')::bigint)) END AS got) AS g
 ORDER BY v.i;
});

check('floor', 'shardid_floor', q{
SELECT v.i, CASE WHEN got = (v.j->>'id')::bigint THEN 'ok' ELSE format('%s: got %s', v.j, got) END
  FROM pg_temp.v('floor') AS v,
       LATERAL (SELECT CASE WHEN v.j->>'epoch_ms' IS NULL
                  THEN shardid_floor(pg_temp.ts((v.j->>'ms')::bigint))
                  ELSE shardid_floor(pg_temp.ts((v.j->>'ms')::bigint), pg_temp.ts((v.j->>'epoch_ms')::bigint)) END
                AS got) AS g
 ORDER BY v.i;
});

check('horizon', 'shardid_horizon', q{
SELECT v.i, CASE WHEN (pg_temp.ms(got), pg_temp.iso(got)) IS NOT DISTINCT FROM ((v.j->>'ms')::bigint, v.j->>'time')
  THEN 'ok' ELSE format('%s: got %s', v.j, got) END
  FROM pg_temp.v('horizon') AS v,
       LATERAL (SELECT CASE WHEN v.j->>'epoch_ms' IS NULL THEN shardid_horizon()
                  ELSE shardid_horizon(pg_temp.ts((v.j->>'epoch_ms')::bigint)) END AS got) AS g
 ORDER BY v.i;
});

check('shortcode', 'shardid_to_shortcode and shardid_from_shortcode', q{
SELECT v.i, CASE WHEN shardid_to_shortcode((v.j->>'id')::bigint) = v.j->>'code'
                  AND shardid_from_shortcode(v.j->>'code') = (v.j->>'id')::bigint
  THEN 'ok' ELSE format('%s: got %s', v.j, shardid_to_shortcode((v.j->>'id')::bigint)) END
  FROM pg_temp.v('shortcode') AS v
 ORDER BY v.i;
});

check('errors', 'each refused input fails with its SQLSTATE', q{
SELECT v.i, CASE WHEN got = v.j->>'sqlstate' THEN 'ok' ELSE format('%s: got %s', v.j, got) END
  FROM pg_temp.v('errors') AS v, LATERAL (SELECT pg_temp.err(v.j) AS got) AS g
 ORDER BY v.i;
});

my $have_public = $node->safe_psql('postgres', q{
SELECT count(DISTINCT proname) FROM pg_proc
 WHERE proname IN ('shardid_public', 'shardid_private', 'shardid_public_bigint',
                   'shardid_private_bigint', 'shardid_public_keys')}) == 5;

SKIP:
{
	skip 'public IDs: the extension has no shardid_public yet; the vectors came from '
	  . $vectors->{public_ids}{source}, 7
	  unless $have_public;

	is(query(q{
SELECT jsonb_agg(jsonb_build_object('version', key_version, 'fingerprint', fingerprint, 'newest', newest)
                 ORDER BY key_version)
       = (pg_read_file(current_setting('vectors.file'))::jsonb #> '{public_ids,fingerprints}')
  FROM shardid_public_keys()}),
		't', 'public IDs: shardid_public_keys gives the fingerprints of the test keys');

	check('public_ids.ids', 'shardid_public, shardid_private and the bigint forms under versions 1 and 2', q{
SELECT v.i, CASE WHEN shardid_public(id, 1) = v.j#>>'{v1,text}' AND shardid_public(id, 2) = v.j#>>'{v2,text}'
                  AND shardid_public(id) = v.j->>'newest'
                  AND shardid_private(v.j#>>'{v1,text}') = id AND shardid_private(v.j#>>'{v2,text}') = id
                  AND shardid_public_bigint(id, 1) = (v.j#>>'{v1,bigint}')::bigint
                  AND shardid_public_bigint(id, 2) = (v.j#>>'{v2,bigint}')::bigint
                  AND shardid_private_bigint((v.j#>>'{v1,bigint}')::bigint, 1) = id
                  AND shardid_private_bigint((v.j#>>'{v2,bigint}')::bigint, 2) = id
  THEN 'ok' ELSE format('%s: got %s %s', v.j, shardid_public(id, 1), shardid_public_bigint(id, 1)) END
  FROM pg_temp.v('public_ids.ids') AS v, LATERAL (SELECT (v.j->>'id')::bigint AS id) AS p
 ORDER BY v.i;
});

	check('public_ids.errors', 'each refused public-ID input fails with its SQLSTATE', q{
SELECT v.i, CASE WHEN got = v.j->>'sqlstate' THEN 'ok' ELSE format('%s: got %s', v.j, got) END
  FROM pg_temp.v('public_ids.errors') AS v, LATERAL (SELECT pg_temp.err(v.j) AS got) AS g
 ORDER BY v.i;
});
}

$node->stop;
done_testing();
