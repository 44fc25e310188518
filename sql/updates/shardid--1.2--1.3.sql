/* shardid--1.2--1.3.sql: the hand-written part of the update from 1.2 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION shardid UPDATE TO '1.3'" to load this file. \quit

--
-- The Makefile makes the update script from this file: the line
-- "--@ sources" below becomes sql/probe.sql, then every function,
-- procedure and view of sql/ as CREATE OR REPLACE, so that each object's
-- text is kept once, in its own file.  What CREATE OR REPLACE cannot do
-- is written here by hand: new sequences and tables before the line,
-- drops of objects that went or whose signature or columns changed
-- before it too, and the data steps after it.  test/t/080_upgrade.pl
-- proves that an updated database equals a fresh one.
--

-- shardid_partition_work, the maintenance of one table switched by
-- flags, is split by action into shardid_partition_plan, _parent, _lock,
-- _drop_lock, _make, _create, _move and _drop (made below).
DROP FUNCTION shardid_partition_work(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
									 pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval,
									 pg_catalog.bool, pg_catalog.bool);

-- shardid_adopt says what it leaves behind (first_id, old_keys), and
-- shardid_partition_status what retention kept (kept_below): new result
-- columns, so the function (and the view over it) are made again.
DROP FUNCTION shardid_adopt(pg_catalog.regclass, pg_catalog.int4, pg_catalog.name);
DROP VIEW shardid_partition_status;
DROP FUNCTION shardid_partition_status();

-- Retention keeps the keys below a table's first shardid ID; a run that
-- did records that ID.
ALTER TABLE shardid_partition_log ADD COLUMN kept_below pg_catalog.int8;

--@ sources
