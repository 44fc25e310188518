/* shardid--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION shardid" to load this file. \quit

--
-- Generating
--

CREATE FUNCTION shardid_next(shard pg_catalog.int4, seq pg_catalog.regclass)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_next'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE FUNCTION shardid_next(shard pg_catalog.int4, seq pg_catalog.regclass,
                             epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_next'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_next(pg_catalog.int4, pg_catalog.regclass) IS
'new ID for a logical shard from the clock and nextval(seq) mod 1024, never repeated; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_next(pg_catalog.int4, pg_catalog.regclass, pg_catalog.timestamptz) IS
'new ID for a logical shard from the clock and nextval(seq) mod 1024, never repeated';

--
-- Encoding and decoding
--

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_encode(created_at pg_catalog.timestamptz,
                               shard pg_catalog.int4, seq pg_catalog.int4,
                               epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_encode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4) IS
'ID from its parts (seq 0 to 1023); epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_encode(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, pg_catalog.timestamptz) IS
'ID from its parts (seq 0 to 1023)';

CREATE FUNCTION shardid_decode(id pg_catalog.int8,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_decode(id pg_catalog.int8, epoch pg_catalog.timestamptz,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_decode(pg_catalog.int8) IS
'creation time, shard and seq of an ID; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_decode(pg_catalog.int8, pg_catalog.timestamptz) IS
'creation time, shard and seq of an ID';

CREATE FUNCTION shardid_shard(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_shard'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_shard(pg_catalog.int8) IS
'logical shard of an ID: (id >> 10) & 8191';

CREATE FUNCTION shardid_seq(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'shardid_seq'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_seq(pg_catalog.int8) IS
'sequence field of an ID: id & 1023';

CREATE FUNCTION shardid_created_at(id pg_catalog.int8)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_created_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_created_at(id pg_catalog.int8, epoch pg_catalog.timestamptz)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_created_at'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_created_at(pg_catalog.int8) IS
'millisecond an ID was made in; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_created_at(pg_catalog.int8, pg_catalog.timestamptz) IS
'millisecond an ID was made in';

CREATE FUNCTION shardid_floor(ts pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_floor'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_floor(ts pg_catalog.timestamptz, epoch pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_floor'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_floor(pg_catalog.timestamptz) IS
'smallest ID any shard can issue in the millisecond of ts; epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_floor(pg_catalog.timestamptz, pg_catalog.timestamptz) IS
'smallest ID any shard can issue in the millisecond of ts';

CREATE FUNCTION shardid_horizon()
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_horizon'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_horizon(epoch pg_catalog.timestamptz)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'shardid_horizon'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_horizon() IS
'last millisecond that encodes to a positive bigint with the epoch 2011-01-01 UTC';
COMMENT ON FUNCTION shardid_horizon(pg_catalog.timestamptz) IS
'last millisecond that encodes to a positive bigint with this epoch';

CREATE FUNCTION shardid_to_shortcode(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_to_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_to_shortcode(pg_catalog.int8) IS
'ID in Instagram''s URL form: base 64, alphabet A-Z a-z 0-9 - _';

CREATE FUNCTION shardid_from_shortcode(code pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_from_shortcode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_from_shortcode(pg_catalog.text) IS
'ID from Instagram''s URL form';

--
-- Statistics of the guard
--

CREATE FUNCTION shardid_stats(OUT datid pg_catalog.oid,
                              OUT seqid pg_catalog.oid,
                              OUT ids_issued pg_catalog.int8,
                              OUT exhausted_waits pg_catalog.int8,
                              OUT clock_waits pg_catalog.int8,
                              OUT clock_refusals pg_catalog.int8,
                              OUT last_ms pg_catalog.timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'shardid_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats() IS
'per-sequence counters of shardid_next in every database';

CREATE VIEW shardid_stats AS
  SELECT s.datid,
         d.datname,
         s.seqid,
         CASE WHEN s.datid OPERATOR(pg_catalog.=) d.oid
                   AND d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
              THEN s.seqid::pg_catalog.regclass END AS sequence,
         s.ids_issued,
         s.exhausted_waits,
         s.clock_waits,
         s.clock_refusals,
         s.last_ms
    FROM @extschema@.shardid_stats() AS s
    LEFT JOIN pg_catalog.pg_database AS d
           ON d.oid OPERATOR(pg_catalog.=) s.datid;

COMMENT ON VIEW shardid_stats IS
'per-sequence counters of shardid_next; "sequence" is filled in for the current database';

CREATE FUNCTION shardid_stats_info(OUT entries pg_catalog.int4,
                                   OUT max_sequences pg_catalog.int4,
                                   OUT evictions pg_catalog.int8,
                                   OUT floor_ms pg_catalog.timestamptz,
                                   OUT stats_reset pg_catalog.timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'shardid_stats_info'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_info() IS
'size of the guard''s table, its evictions and the last counter reset';

CREATE FUNCTION shardid_stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_stats_reset'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_reset() IS
'zero the counters of shardid_stats (the milliseconds issued are kept)';

REVOKE ALL ON FUNCTION shardid_stats_reset() FROM PUBLIC;
