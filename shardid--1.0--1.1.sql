/* shardid--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.1'" to load this file. \quit

--
-- The durable fence
--
-- Each database keeps, in the sequence shardid_fence, a time field at or
-- before which it issues no ID again.  The guard writes it ahead of the IDs
-- it issues (setval, then a WAL flush), so that WAL, base backups, pg_dump
-- and pg_upgrade carry it wherever the data goes; after any start,
-- promotion or restore, every sequence starts at it.  Only the extension's
-- owner may read or write it: shardid_next switches to the owner for that.
--

CREATE SEQUENCE shardid_fence AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_fence IS
'durable fence of shardid_next in this database: a time field at or before which no ID is issued again';

REVOKE ALL ON SEQUENCE shardid_fence FROM PUBLIC;

-- pg_dump carries the fence with the data
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_fence'::pg_catalog.regclass, '');

CREATE FUNCTION shardid_fence_reload()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_fence_reload'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_fence_reload() IS
'make the next shardid_next in this database read its durable fence again';

REVOKE ALL ON FUNCTION shardid_fence_reload() FROM PUBLIC;

-- IDs this server issued here before the fence existed get one now
SELECT @extschema@.shardid_fence_reload();

CREATE FUNCTION shardid_fence_status(OUT datid pg_catalog.oid,
                                     OUT state pg_catalog.text,
                                     OUT fence pg_catalog.int8,
                                     OUT fence_time pg_catalog.timestamptz,
                                     OUT start pg_catalog.int8,
                                     OUT sequences pg_catalog.int4,
                                     OUT writes pg_catalog.int8,
                                     OUT write_waits pg_catalog.int8)
RETURNS SETOF pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_fence_status'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_fence_status() IS
'the durable fence of each database as this server knows it';

CREATE VIEW shardid_fence_status AS
  SELECT f.datid,
         d.datname,
         f.state,
         f.fence,
         f.fence_time,
         f.start,
         f.sequences,
         f.writes,
         f.write_waits
    FROM @extschema@.shardid_fence_status() AS f
    LEFT JOIN pg_catalog.pg_database AS d
           ON d.oid OPERATOR(pg_catalog.=) f.datid;

COMMENT ON VIEW shardid_fence_status IS
'the durable fence of each database as this server knows it; without pg_read_all_stats, the current database only';

GRANT SELECT ON shardid_fence_status TO PUBLIC;

--
-- End of the durable fence section
--

--
-- Statistics: visibility
--
-- shardid_stats gains fence_waits.  What it shows depends on the caller, as
-- pg_stat_statements does it: a role with pg_read_all_stats sees every
-- database's sequences, any other role only the current database's
-- sequences that it may SELECT from.
--

DROP VIEW shardid_stats;
DROP FUNCTION shardid_stats();

CREATE FUNCTION shardid_stats(OUT datid pg_catalog.oid,
                              OUT seqid pg_catalog.oid,
                              OUT ids_issued pg_catalog.int8,
                              OUT exhausted_waits pg_catalog.int8,
                              OUT clock_waits pg_catalog.int8,
                              OUT clock_refusals pg_catalog.int8,
                              OUT last_ms pg_catalog.timestamptz,
                              OUT fence_waits pg_catalog.int8)
RETURNS SETOF pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_stats_1_1'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats() IS
'per-sequence counters of shardid_next: every database''s with pg_read_all_stats, else the current database''s readable sequences';

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
         s.fence_waits,
         s.last_ms
    FROM @extschema@.shardid_stats() AS s
    LEFT JOIN pg_catalog.pg_database AS d
           ON d.oid OPERATOR(pg_catalog.=) s.datid;

COMMENT ON VIEW shardid_stats IS
'per-sequence counters of shardid_next; "sequence" is filled in for the current database';

GRANT SELECT ON shardid_stats TO PUBLIC;

--
-- End of the statistics section
--

--
-- Adopting existing tables
--

--
-- End of the adoption section
--

--
-- Provisioning logical shards (hardened)
--

--
-- End of the provisioning section
--

--
-- Time partitions
--

--
-- End of the time partitions section
--
