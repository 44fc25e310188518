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

-- The statistics gain the sequences' own fences, and the fence status the
-- standbys' timeouts: new columns of the functions behind the views.
DROP VIEW @extschema@.shardid_stats;
DROP FUNCTION @extschema@.shardid_stats();
DROP VIEW @extschema@.shardid_fence_status;
DROP FUNCTION @extschema@.shardid_fence_status();
-- shardid_partition_work, the maintenance of one table switched by
-- flags, is split by action into shardid_partition_parents, _plan,
-- _parent, _lock, _lock_timeout, _drop_lock, _make, _create, _move,
-- _drop and _record (made below).
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

-- The log refuses what no run could write, where 1.2 took any row for
-- the caller's own table: an epoch of 'infinity' there made
-- shardid_partition_status fail for every reader.
--@ include tables/shardid_partition_log_checks.sql

--@ sources

-- Every sequence that a column's DEFAULT feeds to shardid_next gets its
-- own fence now, at the database's, which is at or after every ID the
-- database issued: a dump of part of the database made from now on
-- carries it.  (The library writes it anyway before a sequence's first ID;
-- this covers the sequences that issue none before they are dumped.)  A
-- sequence that cannot carry one (AS integer, a low MAXVALUE, an
-- INCREMENT other than 1 to 1024) is left as it is, with a WARNING: its
-- next shardid_next says why it is refused.  setval moves each value
-- forward only, and runs no code of any role's.  This runs before
-- anything below takes the database fence's lock: a role that holds a
-- lock on its own sequence makes the update wait, not every fence write.
DO $fences$
DECLARE
	fence pg_catalog.int8 := pg_catalog.pg_sequence_last_value('@extschema@.shardid_fence'::pg_catalog.regclass);
	fence_value pg_catalog.int8;
	s record;
	seq pg_catalog.regclass;
	v pg_catalog.int8;
	todo pg_catalog.regclass[] := '{}';
	busy pg_catalog.regclass[];
	old_timeout pg_catalog.text := pg_catalog.current_setting('lock_timeout');
BEGIN
	IF fence IS NULL OR fence OPERATOR(pg_catalog.<) 0 THEN
		RETURN;
	END IF;
	fence_value := @extschema@.shardid_fence_value(fence);
	FOR s IN
		SELECT DISTINCT ds.refobjid::pg_catalog.regclass AS seq, q.seqmax, q.seqincrement
		  FROM pg_catalog.pg_depend AS df
		  JOIN pg_catalog.pg_depend AS ds
			ON ds.classid OPERATOR(pg_catalog.=) df.classid
		   AND ds.objid OPERATOR(pg_catalog.=) df.objid
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) ds.refobjid
		  JOIN pg_catalog.pg_sequence AS q ON q.seqrelid OPERATOR(pg_catalog.=) c.oid
		 WHERE df.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
		   AND df.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
		   AND df.refobjid IN (SELECT p.oid FROM pg_catalog.pg_proc AS p
								WHERE p.pronamespace OPERATOR(pg_catalog.=) '@extschema@'::pg_catalog.regnamespace
								  AND p.proname OPERATOR(pg_catalog.=) 'shardid_next')
		   AND ds.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND c.relpersistence OPERATOR(pg_catalog.=) 'p'
		 ORDER BY 1
	LOOP
		IF s.seqmax OPERATOR(pg_catalog.<) (INT8 '1' OPERATOR(pg_catalog.<<) 50)
		   OR s.seqincrement OPERATOR(pg_catalog.<) 1
		   OR s.seqincrement OPERATOR(pg_catalog.>) 1024 THEN
			RAISE WARNING USING
				MESSAGE = pg_catalog.format('sequence %s cannot carry the durable fence of its IDs', s.seq),
				DETAIL = 'shardid_next keeps each sequence''s fence in its value, which must go up by 1 to 1024 a call and reach 2^50 by the horizon.',
				HINT = pg_catalog.format('ALTER SEQUENCE %s AS bigint NO MAXVALUE NO CYCLE INCREMENT BY 1; shardid_next refuses it until then.', s.seq);
			CONTINUE;
		END IF;
		todo := todo OPERATOR(pg_catalog.||) s.seq;
	END LOOP;

	-- Each wait for a sequence's lock (which its owner, or a role with
	-- ALTER SEQUENCE's rights, may hold as long as it likes) is bounded: a
	-- second, then two more tries a second apart; a sequence still locked
	-- is left as it is, and named in a WARNING.  The update holds the
	-- extension's views meanwhile (shardid_fence_status waits for it), so
	-- it never waits longer than that.
	PERFORM pg_catalog.set_config('lock_timeout', '1000', true);
	FOR attempt IN 1 .. 3 LOOP
		busy := '{}';
		FOREACH seq IN ARRAY todo LOOP
			BEGIN
				-- the value as stored, also one set with is_called false
				v := @extschema@.shardid_sequence_value(seq);
				IF v OPERATOR(pg_catalog.<) fence_value THEN
					PERFORM pg_catalog.setval(seq, fence_value, false);
				END IF;
			EXCEPTION WHEN lock_not_available THEN
				busy := busy OPERATOR(pg_catalog.||) seq;
			END;
		END LOOP;
		todo := busy;
		EXIT WHEN pg_catalog.cardinality(todo) OPERATOR(pg_catalog.=) 0 OR attempt OPERATOR(pg_catalog.=) 3;
		PERFORM pg_catalog.pg_sleep(1);
	END LOOP;
	PERFORM pg_catalog.set_config('lock_timeout', old_timeout, true);
	IF pg_catalog.cardinality(todo) OPERATOR(pg_catalog.>) 0 THEN
		RAISE WARNING USING
			MESSAGE = pg_catalog.format('the update did not write the durable fence into %s sequences: other sessions held their locks',
										pg_catalog.cardinality(todo)),
			DETAIL = pg_catalog.format('Sequences %s were locked at each of 3 tries, 1 s each, a second apart; they were left as they were.',
									   pg_catalog.array_to_string(todo::pg_catalog.text[], ', ')),
			HINT = 'Nothing is lost: shardid_next writes a sequence''s fence before its next ID.  Until then a dump of such a sequence carries no fence; have each issue one ID once its lock is free.';
	END IF;
END
$fences$;

-- The database's fence and its lead are no longer extension configuration:
-- no dump carries them, so no restore can set them back (a sequence
-- dropped from the extension leaves its configuration with it, and comes
-- back as a member).
ALTER EXTENSION shardid DROP SEQUENCE @extschema@.shardid_fence;
ALTER EXTENSION shardid ADD SEQUENCE @extschema@.shardid_fence;
ALTER EXTENSION shardid DROP SEQUENCE @extschema@.shardid_fence_lead;
ALTER EXTENSION shardid ADD SEQUENCE @extschema@.shardid_fence_lead;

-- The extension's own sequences move to a schema of their own, which no
-- role but the extension's owner may use (sql/schemas/): in the
-- extension's schema, where PUBLIC may look names up, any role could
-- queue a lock on them (CREATE RULE, CREATE TRIGGER, PARTITION OF and
-- REFERENCES lock the relation they name before they check it) behind a
-- transaction that holds theirs, and every fence writer of the database
-- then waited behind her.  SET SCHEMA moves each sequence as it is: the
-- same relation, its value (the fence never goes back), its grants, its
-- comment, its membership and the epoch's place in pg_dump's
-- configuration.  Last, and in the order the fence writers lock them (the
-- fence, the epoch, the lead): from the first, every fence writer of the
-- database waits for the update to end.  A transaction that holds one of
-- them (one that read the epoch, say) is waited for in tries of 100 ms,
-- for 5 s: the update then fails and says so, rather than stop every
-- writer behind it for as long as that transaction lasts.
--@ include schemas/shardid_internal.sql

DO $move$
DECLARE
	old_timeout pg_catalog.text := pg_catalog.current_setting('lock_timeout');
	deadline pg_catalog.timestamptz := pg_catalog.clock_timestamp() OPERATOR(pg_catalog.+) '5 s'::pg_catalog.interval;
BEGIN
	-- Each try waits 100 ms at most, and lets go of what it took if it
	-- fails, so that the writers queued behind it wait no longer than
	-- that; tries go on for 5 s.
	PERFORM pg_catalog.set_config('lock_timeout', '100', true);
	LOOP
		BEGIN
			ALTER SEQUENCE @extschema@.shardid_fence SET SCHEMA shardid_internal;
			ALTER SEQUENCE @extschema@.shardid_epoch SET SCHEMA shardid_internal;
			ALTER SEQUENCE @extschema@.shardid_fence_lead SET SCHEMA shardid_internal;
			EXIT;
		EXCEPTION WHEN lock_not_available THEN
			IF pg_catalog.clock_timestamp() OPERATOR(pg_catalog.>=) deadline THEN
				RAISE EXCEPTION USING
					ERRCODE = 'lock_not_available',
					MESSAGE = 'the update could not lock the sequences of extension shardid',
					DETAIL = 'Another transaction held a lock on shardid_fence, shardid_epoch or shardid_fence_lead through tries of 100 ms for 5 s; the update moves them to the schema shardid_internal, and every fence writer of the database waits while it does.',
					HINT = 'End the transactions that hold them (pg_locks names them), then run the update again.';
			END IF;
		END;
		PERFORM pg_catalog.pg_sleep(0.2);
	END LOOP;
	PERFORM pg_catalog.set_config('lock_timeout', old_timeout, true);
END
$move$;

-- Owned, as in a fresh install, by the extension's owner, whoever runs
-- the update.
DO $owner$
BEGIN
	EXECUTE pg_catalog.format('ALTER SCHEMA shardid_internal OWNER TO %s',
							  (SELECT e.extowner::pg_catalog.regrole::pg_catalog.text
								 FROM pg_catalog.pg_extension AS e
								WHERE e.extname OPERATOR(pg_catalog.=) 'shardid'));
END
$owner$;
