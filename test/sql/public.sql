--
-- Opaque public IDs, against values computed from the spec alone by
-- test/unit/public_ids_ref.py.  The server runs with the spec's test keys
--   shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100'
-- in its configuration (test/run.sh and debian/tests/installcheck put them
-- there: a PGC_SIGHUP setting cannot be SET).  The server without keys,
-- reloads, rotation and the log are test/t/095_public_ids.pl's.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
\set SHOW_CONTEXT never

-- The configured versions, newest last, with the spec's fingerprints
-- (Speck64/128 of "shardid0" under each key).
SELECT * FROM shardid_public_keys();

-- P under key 1 and key 2, and the text forms, as public_ids_ref.py
-- prints them:  id | P1 | text 1 | P2 | text 2.
SELECT id,
       shardid_public_bigint(id, 1) AS p1,
       shardid_public(id, 1) AS text1,
       shardid_public_bigint(id, 2) AS p2,
       shardid_public(id, 2) AS text2
  FROM unnest(ARRAY[0, 1, 2, 1023, 4185136929178974185, 9007199254740992,
                    4611686018427387904, 9223372036854775807]::bigint[]) AS id;

-- The newest key (version 2) mints by default; any configured version
-- decodes.
SELECT shardid_public(0) AS newest, shardid_private('CBLWpDQqpDKc') AS v2,
       shardid_private('BH_PAV9oO-hH') AS v1;
SELECT shardid_private('BAwi8OIK2Hff') = 9223372036854775807 AS max_id,
       shardid_private_bigint(874526131298531295, 1) AS q1,
       shardid_private_bigint(8427495579740409659, 2) AS q2;

-- Round trips over 100,000 IDs spread over the whole range, under both
-- versions, through the text and the bigint forms: no mismatch, no
-- collision, never a value past 2^63 - 1 (a bigint cannot hold one: it
-- would have failed), and the text's second character is A to H.
WITH ids AS (
  SELECT (i * 92233720368547::bigint) + (i % 1024) AS id, i
    FROM generate_series(0, 99999) AS i
)
SELECT count(*) FILTER (WHERE shardid_private(shardid_public(id)) <> id) AS text_newest_bad,
       count(*) FILTER (WHERE shardid_private(shardid_public(id, 1)) <> id) AS text_v1_bad,
       count(*) FILTER (WHERE shardid_private_bigint(shardid_public_bigint(id, 1), 1) <> id) AS bigint_v1_bad,
       count(*) FILTER (WHERE shardid_private_bigint(shardid_public_bigint(id, 2), 2) <> id) AS bigint_v2_bad,
       count(*) FILTER (WHERE substr(shardid_public(id), 2, 1) NOT BETWEEN 'A' AND 'H') AS bad_first_digit,
       count(DISTINCT shardid_public(id)) AS distinct_public
  FROM ids;

-- Consecutive IDs give unrelated public IDs: no two of 1,000 neighbours
-- share their first five digits.
SELECT count(DISTINCT substr(shardid_public(i), 1, 6)) AS distinct_prefixes
  FROM generate_series(4185136929178974185, 4185136929178974185 + 999) AS i;

-- Every refusal, with its SQLSTATE.
-- wrong length
SELECT err($$SELECT shardid_private('')$$);
SELECT err($$SELECT shardid_private('BH_PAV9oO-h')$$);
SELECT err($$SELECT shardid_private('BH_PAV9oO-hHH')$$);
-- a character outside the alphabet
SELECT err($$SELECT shardid_private('BH_PAV9oO+hH')$$);
SELECT err($$SELECT shardid_private('BH_PAV9oO=hH')$$);
SELECT err($$SELECT shardid_private('BH_PAV9oO hH')$$);
-- first digit past H: 2^63 or more
SELECT err($$SELECT shardid_private('BI_PAV9oO-hH')$$);
SELECT err($$SELECT shardid_private('C___________')$$);
-- version not configured (D is 3, A is 0)
SELECT err($$SELECT shardid_private('DH_PAV9oO-hH')$$);
SELECT err($$SELECT shardid_private('AH_PAV9oO-hH')$$);
SELECT err($$SELECT shardid_public(1, 3)$$);
SELECT err($$SELECT shardid_public(1, 64)$$);
SELECT err($$SELECT shardid_public(1, -1)$$);
SELECT err($$SELECT shardid_public_bigint(1, 0)$$);
SELECT err($$SELECT shardid_private_bigint(1, 63)$$);
-- negative IDs
SELECT err($$SELECT shardid_public(-1)$$);
SELECT err($$SELECT shardid_public(-9223372036854775808, 1)$$);
SELECT err($$SELECT shardid_public_bigint(-1, 1)$$);
SELECT err($$SELECT shardid_private_bigint(-1, 1)$$);
-- a well-formed string decodes to some ID: public IDs authenticate
-- nothing (any 12 characters with a configured version and a second
-- character A to H are the public ID of exactly one ID)
SELECT shardid_private('BAAAAAAAAAAA') >= 0 AS decodes,
       shardid_public(shardid_private('BAAAAAAAAAAA'), 1) AS same;

-- STRICT: NULL in, NULL out.
SELECT shardid_public(NULL) IS NULL AS a, shardid_private(NULL) IS NULL AS b,
       shardid_public_bigint(1, NULL) IS NULL AS c;

-- Any role may call them, and none sees the keys.
CREATE ROLE public_id_reader;
SET ROLE public_id_reader;
SELECT shardid_public(1023) AS minted, shardid_private('CG4Ueu8IdzUb') AS decoded;
SELECT count(*) AS keys_seen FROM shardid_public_keys();
-- (the SQLSTATE only: the message's wording differs between versions)
SELECT left(err($$SHOW shardid.public_id_keys$$), 5) AS show;
SELECT count(*) AS in_pg_settings FROM pg_settings WHERE name = 'shardid.public_id_keys';
SELECT left(err($$SELECT current_setting('shardid.public_id_keys')$$), 5) AS current_setting;
RESET ROLE;
DROP ROLE public_id_reader;
-- not even a superuser finds it in pg_settings (GUC_NO_SHOW_ALL)
SELECT count(*) AS in_pg_settings FROM pg_settings WHERE name = 'shardid.public_id_keys';
-- and it cannot be SET, nor stored in the catalog for a role or database
SELECT left(err($$SET shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f'$$), 5) AS set;
SELECT left(err($$ALTER ROLE CURRENT_USER SET shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f'$$), 5) AS alter_role;
SELECT left(err($$ALTER DATABASE contrib_regression SET shardid.public_id_keys = '1:000102030405060708090a0b0c0d0e0f'$$), 5) AS alter_database;
