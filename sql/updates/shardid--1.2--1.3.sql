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

--@ sources
