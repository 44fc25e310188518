--
-- test/vectors/vectors.json, the vectors the client libraries
-- (clients/js, clients/python) are tested against, holds for the extension
-- in this tree: every vector of every section, checked in SQL.  The file is
-- read by psql from the source tree (PG_ABS_SRCDIR, set by pg_regress) into
-- a variable and used as one quoted literal, so no value is pasted into a
-- query.  The public IDs need the spec's test keys in the server's
-- configuration, as test/sql/public.sql does.
--
-- The counts below are the file's: a regenerated file with more or fewer
-- vectors changes them, and this expected output is updated with it.
--
\set SHOW_CONTEXT never
\getenv abs_srcdir PG_ABS_SRCDIR
\set vectors_file :abs_srcdir '/vectors/vectors.json'
\set vectors_text `cat :'vectors_file'`
SET timezone = 'UTC';
CREATE TEMP TABLE vectors AS SELECT :'vectors_text'::jsonb AS doc;
\unset vectors_text

-- Unix milliseconds to timestamptz and back, ISO 8601 as the file writes
-- it (null outside years 1 to 9999), and the vectors of one section.
CREATE FUNCTION pg_temp.ts(ms bigint) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
  SELECT 'epoch'::timestamptz + d * interval '1 day' + (ms - d::bigint * 86400000) * interval '1 millisecond'
    FROM (SELECT floor(ms::numeric / 86400000)::int AS d) AS x $$;
CREATE FUNCTION pg_temp.ms(t timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT floor(extract(epoch FROM t) * 1000)::bigint $$;
CREATE FUNCTION pg_temp.iso(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN t BETWEEN '0001-01-01+00' AND '9999-12-31 23:59:59.999+00'
    THEN to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END $$;
CREATE FUNCTION pg_temp.v(section text) RETURNS TABLE (i bigint, j jsonb) LANGUAGE sql AS $$
  SELECT a.i, a.j FROM vectors, jsonb_array_elements(doc #> string_to_array(section, '.'))
    WITH ORDINALITY AS a(j, i) $$;

-- The SQLSTATE a refused input raises, or 'no error'.
CREATE FUNCTION pg_temp.sqlstate_of(c jsonb) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  a jsonb := c->'args';
  e timestamptz;
BEGIN
  e := pg_temp.ts((a->>'epoch_ms')::bigint);  -- may itself be refused
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
    IF e IS NULL THEN PERFORM shardid_horizon();
    ELSE PERFORM shardid_horizon(e); END IF;
  WHEN 'to_shortcode' THEN PERFORM shardid_to_shortcode((a->>'id')::bigint);
  WHEN 'from_shortcode' THEN PERFORM shardid_from_shortcode(a->>'code');
  WHEN 'to_public' THEN
    IF a->>'version' IS NULL THEN PERFORM shardid_public((a->>'id')::bigint);
    ELSE PERFORM shardid_public((a->>'id')::bigint, (a->>'version')::int); END IF;
  WHEN 'to_private' THEN PERFORM shardid_private(a->>'text');
  WHEN 'to_public_bigint' THEN PERFORM shardid_public_bigint((a->>'id')::bigint, (a->>'version')::int);
  WHEN 'to_private_bigint' THEN PERFORM shardid_private_bigint((a->>'c')::bigint, (a->>'version')::int);
  ELSE RETURN 'unknown function ' || (c->>'fn');
  END CASE;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;

-- One row per vector: its section, its place in the file, and what went
-- wrong (null when the extension agrees).
CREATE TEMP TABLE results (section text, i bigint, wrong text);

INSERT INTO results
SELECT 'decode', v.i,
       CASE WHEN (pg_temp.ms(d.created_at), d.shard, d.seq, pg_temp.iso(d.created_at),
                  shardid_shard(p.id), shardid_seq(p.id), pg_temp.ms(x.c))
           IS DISTINCT FROM ((v.j->>'ms')::bigint, (v.j->>'shard')::int, (v.j->>'seq')::int, v.j->>'time',
                             (v.j->>'shard')::int, (v.j->>'seq')::int, (v.j->>'ms')::bigint)
       THEN format('%s: got %s %s %s', v.j, pg_temp.ms(d.created_at), d.shard, d.seq) END
  FROM pg_temp.v('decode') AS v,
       LATERAL (SELECT (v.j->>'id')::bigint AS id, pg_temp.ts((v.j->>'epoch_ms')::bigint) AS e) AS p,
       LATERAL (SELECT * FROM shardid_decode(p.id) WHERE p.e IS NULL
                UNION ALL SELECT * FROM shardid_decode(p.id, p.e) WHERE p.e IS NOT NULL) AS d,
       LATERAL (SELECT CASE WHEN p.e IS NULL THEN shardid_created_at(p.id)
                            ELSE shardid_created_at(p.id, p.e) END AS c) AS x;

INSERT INTO results
SELECT 'encode', v.i, CASE WHEN got IS DISTINCT FROM (v.j->>'id')::bigint THEN format('%s: got %s', v.j, got) END
  FROM pg_temp.v('encode') AS v,
       LATERAL (SELECT CASE WHEN v.j->>'epoch_ms' IS NULL
                  THEN shardid_encode(pg_temp.ts((v.j->>'ms')::bigint), (v.j->>'shard')::int, (v.j->>'seq')::int)
                  ELSE shardid_encode(pg_temp.ts((v.j->>'ms')::bigint), (v.j->>'shard')::int, (v.j->>'seq')::int,
                                      pg_temp.ts((v.j->>'epoch_ms')::bigint)) END AS got) AS g;

INSERT INTO results
SELECT 'floor', v.i, CASE WHEN got IS DISTINCT FROM (v.j->>'id')::bigint THEN format('%s: got %s', v.j, got) END
  FROM pg_temp.v('floor') AS v,
       LATERAL (SELECT CASE WHEN v.j->>'epoch_ms' IS NULL
                  THEN shardid_floor(pg_temp.ts((v.j->>'ms')::bigint))
                  ELSE shardid_floor(pg_temp.ts((v.j->>'ms')::bigint), pg_temp.ts((v.j->>'epoch_ms')::bigint)) END
                AS got) AS g;

INSERT INTO results
SELECT 'horizon', v.i,
       CASE WHEN (pg_temp.ms(got), pg_temp.iso(got)) IS DISTINCT FROM ((v.j->>'ms')::bigint, v.j->>'time')
       THEN format('%s: got %s', v.j, got) END
  FROM pg_temp.v('horizon') AS v,
       LATERAL (SELECT CASE WHEN v.j->>'epoch_ms' IS NULL THEN shardid_horizon()
                  ELSE shardid_horizon(pg_temp.ts((v.j->>'epoch_ms')::bigint)) END AS got) AS g;

INSERT INTO results
SELECT 'shortcode', v.i,
       CASE WHEN (shardid_to_shortcode((v.j->>'id')::bigint), shardid_from_shortcode(v.j->>'code'))
           IS DISTINCT FROM (v.j->>'code', (v.j->>'id')::bigint)
       THEN format('%s: got %s', v.j, shardid_to_shortcode((v.j->>'id')::bigint)) END
  FROM pg_temp.v('shortcode') AS v;

INSERT INTO results
SELECT 'errors', v.i, CASE WHEN got IS DISTINCT FROM v.j->>'sqlstate' THEN format('%s: got %s', v.j, got) END
  FROM pg_temp.v('errors') AS v, LATERAL (SELECT pg_temp.sqlstate_of(v.j) AS got) AS g;

-- Public IDs under the test keys: the text and bigint forms both ways,
-- under versions 1 and 2 and the newest.
INSERT INTO results
SELECT 'public_ids.ids', v.i,
       CASE WHEN (shardid_public(p.id, 1), shardid_public(p.id, 2), shardid_public(p.id),
                  shardid_private(v.j#>>'{v1,text}'), shardid_private(v.j#>>'{v2,text}'),
                  shardid_public_bigint(p.id, 1), shardid_public_bigint(p.id, 2),
                  shardid_private_bigint((v.j#>>'{v1,bigint}')::bigint, 1),
                  shardid_private_bigint((v.j#>>'{v2,bigint}')::bigint, 2))
           IS DISTINCT FROM (v.j#>>'{v1,text}', v.j#>>'{v2,text}', v.j->>'newest', p.id, p.id,
                             (v.j#>>'{v1,bigint}')::bigint, (v.j#>>'{v2,bigint}')::bigint, p.id, p.id)
       THEN format('%s: got %s %s', v.j, shardid_public(p.id, 1), shardid_public_bigint(p.id, 1)) END
  FROM pg_temp.v('public_ids.ids') AS v, LATERAL (SELECT (v.j->>'id')::bigint AS id) AS p;

INSERT INTO results
SELECT 'public_ids.errors', v.i, CASE WHEN got IS DISTINCT FROM v.j->>'sqlstate' THEN format('%s: got %s', v.j, got) END
  FROM pg_temp.v('public_ids.errors') AS v, LATERAL (SELECT pg_temp.sqlstate_of(v.j) AS got) AS g;

-- The configured keys have the fingerprints the file records.
INSERT INTO results
SELECT 'public_ids.fingerprints', 1,
       CASE WHEN got IS DISTINCT FROM (SELECT doc #> '{public_ids,fingerprints}' FROM vectors)
       THEN format('got %s', got) END
  FROM (SELECT jsonb_agg(jsonb_build_object('version', key_version, 'fingerprint', fingerprint,
                                            'newest', newest) ORDER BY key_version) AS got
          FROM shardid_public_keys()) AS k;

-- Every section of the file was read (none is missing or empty), the
-- vectors checked in each, and the ones the extension disagrees with.
SELECT s.section, count(r.i) AS vectors, count(r.wrong) AS wrong
  FROM unnest(ARRAY['decode', 'encode', 'floor', 'horizon', 'shortcode', 'errors',
                    'public_ids.ids', 'public_ids.errors', 'public_ids.fingerprints'])
       WITH ORDINALITY AS s(section, n)
  LEFT JOIN results AS r USING (section)
 GROUP BY s.section, s.n
 ORDER BY s.n;
SELECT section, i, wrong FROM results WHERE wrong IS NOT NULL ORDER BY section, i;

-- The Speck64/128 vector the file carries is the published one (the cipher
-- itself is checked against it by the unit tests; the file is what the
-- clients check theirs against).
SELECT (doc -> 'speck') - 'about' AS speck FROM vectors;
