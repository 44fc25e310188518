/* shardid--1.2.sql, made by the Makefile from the files in sql/extension */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION shardid" to load this file. \quit

--
-- sql/extension/ holds the current definition of every object of shardid,
-- one file per object or small group, numbered in dependency order; the
-- Makefile joins them, in that order, into the install script of the
-- current version.  A change to an object goes here and, as the change
-- only, into the next release's update script, shardid--A--B.sql.
--

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
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION shardid_decode(id pg_catalog.int8, epoch pg_catalog.timestamptz,
                               OUT created_at pg_catalog.timestamptz,
                               OUT shard pg_catalog.int4,
                               OUT seq pg_catalog.int4)
RETURNS pg_catalog.record
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

--
-- Shortcodes
--

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
-- Opaque public IDs: the ID encrypted under a key of
-- shardid.public_id_keys (Speck64/128 with cycle walking), as 12
-- characters.  STABLE, not IMMUTABLE: the keys are a setting.
--

CREATE FUNCTION shardid_public(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public(pg_catalog.int8) IS
'opaque public ID of an ID under the newest key of shardid.public_id_keys: 12 characters that hide its time, shard and volume';

CREATE FUNCTION shardid_public(id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'shardid_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public(pg_catalog.int8, pg_catalog.int4) IS
'opaque public ID of an ID under the given configured key version';

CREATE FUNCTION shardid_private(public_id pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private(pg_catalog.text) IS
'ID of a public ID, under the key version it names';

CREATE FUNCTION shardid_public_bigint(id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_public_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_bigint(pg_catalog.int8, pg_catalog.int4) IS
'the keyed permutation of 0 to 2^63-1 behind public IDs, under the given key version';

CREATE FUNCTION shardid_private_bigint(public_id pg_catalog.int8, key_version pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_private_bigint'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_private_bigint(pg_catalog.int8, pg_catalog.int4) IS
'inverse of shardid_public_bigint under the given key version';

CREATE FUNCTION shardid_public_keys()
RETURNS TABLE (key_version pg_catalog.int4, fingerprint pg_catalog.text, newest pg_catalog.bool)
AS 'MODULE_PATHNAME', 'shardid_public_keys'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION shardid_public_keys() IS
'the configured public ID key versions, each with a fingerprint of its key (never the key)';

--
-- The epoch
--
-- Each database has an epoch, the instant from which its IDs count
-- milliseconds: 2011-01-01 00:00:00 UTC unless shardid_set_epoch has set
-- another.  It is kept in the sequence shardid_epoch, in Unix
-- milliseconds, so that it travels with the data as the fence does.
--

CREATE SEQUENCE shardid_epoch AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_epoch IS
'epoch of this database in Unix milliseconds, set by shardid_set_epoch; never set (-1) means the default, 2011-01-01 00:00:00 UTC';

REVOKE ALL ON SEQUENCE shardid_epoch FROM PUBLIC;

-- pg_dump carries the epoch with the data
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_epoch'::pg_catalog.regclass, '');

-- The first function of 1.2's library: a server still running an older
-- library (installed, but not restarted since) says so here.
DO $probe$
BEGIN
	CREATE FUNCTION @extschema@.shardid_epoch()
	RETURNS pg_catalog.timestamptz
	AS 'MODULE_PATHNAME', 'shardid_epoch'
	LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
EXCEPTION WHEN undefined_function THEN
	RAISE EXCEPTION USING
		ERRCODE = 'object_not_in_prerequisite_state',
		MESSAGE = 'the shardid library this server loaded is older than version 1.2',
		DETAIL = SQLERRM,
		HINT = 'Restart the server, so that it loads the shardid library that was installed, then run this again.';
END
$probe$;

COMMENT ON FUNCTION shardid_epoch() IS
'epoch of this database: the one shardid_set_epoch set, else 2011-01-01 00:00:00 UTC';

CREATE FUNCTION shardid_set_epoch(epoch pg_catalog.timestamptz)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_set_epoch'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) IS
'set the epoch of this database; superuser or the extension''s owner only';

REVOKE ALL ON FUNCTION shardid_set_epoch(pg_catalog.timestamptz) FROM PUBLIC;

--
-- The durable fence
--
-- Each database keeps, in the sequence shardid_fence, a time field at or
-- before which it issues no ID again.  The guard writes it ahead of the IDs
-- it issues (setval, then a WAL flush), so that WAL, base backups, pg_dump
-- and pg_upgrade carry it wherever the data goes; after any start,
-- promotion or restore, every sequence starts at it.  Only the extension's
-- owner may read or write it: shardid_next switches to the owner for that.
-- shardid_fence_lead keeps the lead the fence was written with, and
-- shardid_fence_lower, for a superuser, takes the fence back down.
--

CREATE SEQUENCE shardid_fence AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_fence IS
'durable fence of shardid_next in this database: a time field at or before which no ID is issued again';

REVOKE ALL ON SEQUENCE shardid_fence FROM PUBLIC;

-- pg_dump carries the fence with the data
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_fence'::pg_catalog.regclass, '');

CREATE SEQUENCE shardid_fence_lead AS pg_catalog.int8 MINVALUE -1 START WITH -1 NO CYCLE;

COMMENT ON SEQUENCE shardid_fence_lead IS
'how far ahead of the IDs the durable fence may be, in ms: shardid.fence_lead plus a quarter, as in force when the fence was last written, so that a start judges the fence by the lead it was written with';

REVOKE ALL ON SEQUENCE shardid_fence_lead FROM PUBLIC;

-- pg_dump carries the lead with the fence
SELECT pg_catalog.pg_extension_config_dump('@extschema@.shardid_fence_lead'::pg_catalog.regclass, '');

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

CREATE FUNCTION shardid_fence_set(field pg_catalog.int8)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'shardid_fence_set'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION shardid_fence_set(pg_catalog.int8) IS
'internal, called by shardid_fence_lower: write the durable fence of this database down to a time field, or to the last field this server issued there if later, reset shared memory to it, and return the field written';

REVOKE ALL ON FUNCTION shardid_fence_set(pg_catalog.int8) FROM PUBLIC;

-- Lowering the fence lets IDs after target be issued again, so it refuses
-- to go below any ID this database holds: every column of a table (not of
-- a partition: its parent's max() covers it) whose default calls
-- shardid_next.  IDs that have left the database it cannot see.
CREATE FUNCTION shardid_fence_lower(target pg_catalog.timestamptz)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	target_field pg_catalog.int8;
	col record;
	max_id pg_catalog.int8;
	top_id pg_catalog.int8;
	top record;
	lowered pg_catalog.int8;
	msg pg_catalog.text;
BEGIN
	IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles AS r
			 WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = 'permission denied for function shardid_fence_lower',
			HINT = 'Only a superuser may lower the durable fence: below it, IDs can be issued again.';
	END IF;

	-- the time field of target; shardid_floor refuses a time out of range
	target_field := @extschema@.shardid_floor(target, @extschema@.shardid_epoch())
		OPERATOR(pg_catalog.>>) 23;

	FOR col IN
		SELECT ns.nspname, c.relname, a.attname
		  FROM pg_catalog.pg_depend AS d
		  JOIN pg_catalog.pg_attrdef AS ad ON ad.oid OPERATOR(pg_catalog.=) d.objid
		  JOIN pg_catalog.pg_attribute AS a
			ON a.attrelid OPERATOR(pg_catalog.=) ad.adrelid
		   AND a.attnum OPERATOR(pg_catalog.=) ad.adnum
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) ad.adrelid
		  JOIN pg_catalog.pg_namespace AS ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
		   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
		   AND d.refobjid IN (SELECT p.oid
								FROM pg_catalog.pg_proc AS p
								JOIN pg_catalog.pg_extension AS e
								  ON e.extnamespace OPERATOR(pg_catalog.=) p.pronamespace
							   WHERE e.extname OPERATOR(pg_catalog.=) 'shardid'
								 AND p.proname OPERATOR(pg_catalog.=) 'shardid_next')
		   AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::pg_catalog."char"[])
		   AND NOT c.relispartition
		   -- other sessions' temporary tables (orphans of a crash too) cannot be read
		   AND NOT pg_catalog.pg_is_other_temp_schema(c.relnamespace)
		   AND NOT a.attisdropped
		 GROUP BY ns.nspname, c.relname, a.attname
		 ORDER BY ns.nspname, c.relname, a.attname
	LOOP
		EXECUTE pg_catalog.format('SELECT pg_catalog.max(%I) FROM %I.%I',
								  col.attname, col.nspname, col.relname)
		   INTO max_id;
		IF max_id IS NOT NULL AND (top_id IS NULL OR max_id OPERATOR(pg_catalog.>) top_id) THEN
			top_id := max_id;
			top := col;
		END IF;
	END LOOP;

	IF target_field OPERATOR(pg_catalog.<) (top_id OPERATOR(pg_catalog.>>) 23) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = pg_catalog.format('fence cannot be lowered to %s', target),
			DETAIL = pg_catalog.format('Column %I of table %I.%I holds an ID made at %s.',
									   top.attname, top.nspname, top.relname,
									   @extschema@.shardid_created_at(top_id, @extschema@.shardid_epoch())),
			HINT = 'Choose a time at or after that ID.';
	END IF;

	-- never below an ID this server issued since it started, either
	lowered := @extschema@.shardid_fence_set(target_field);
	msg := pg_catalog.format('durable fence of database "%s" lowered to time field %s (%s)',
							 pg_catalog.current_database(), lowered,
							 @extschema@.shardid_created_at(lowered OPERATOR(pg_catalog.<<) 23,
															@extschema@.shardid_epoch()));
	RAISE LOG '%', msg;
	RAISE NOTICE '%', msg;
	RETURN lowered;
END
$fn$;

COMMENT ON FUNCTION shardid_fence_lower(pg_catalog.timestamptz) IS
'superuser only: lower the durable fence of this database to target, refusing to go below any ID in its columns that default to shardid_next; IDs that have left the database it cannot know';

REVOKE ALL ON FUNCTION shardid_fence_lower(pg_catalog.timestamptz) FROM PUBLIC;

--
-- Statistics of the guard
--
-- What shardid_stats shows depends on the caller, as pg_stat_statements
-- does it: a role with pg_read_all_stats sees every database's sequences,
-- any other role only the current database's sequences that it may SELECT
-- from.
--

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

CREATE FUNCTION shardid_stats_info(OUT entries pg_catalog.int4,
                                   OUT max_sequences pg_catalog.int4,
                                   OUT evictions pg_catalog.int8,
                                   OUT floor_ms pg_catalog.timestamptz,
                                   OUT stats_reset pg_catalog.timestamptz,
                                   OUT evicted_exhausted_waits pg_catalog.int8,
                                   OUT evicted_clock_waits pg_catalog.int8,
                                   OUT evicted_clock_refusals pg_catalog.int8,
                                   OUT evicted_fence_waits pg_catalog.int8)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'shardid_stats_info'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_info() IS
'size of the guard''s table, its evictions, what the evicted entries had counted, and the last counter reset';

CREATE FUNCTION shardid_stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'shardid_stats_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION shardid_stats_reset() IS
'zero the counters of shardid_stats (the milliseconds issued are kept)';

REVOKE ALL ON FUNCTION shardid_stats_reset() FROM PUBLIC;

--
-- Provisioning logical shards: one schema per shard
--
-- Schema-per-shard provisioning for fleets of servers; see
-- tools/shardid-fleet and docs/fleet.md.
--
-- A logical shard n lives in its own schema, by default shard_NNNN with the
-- number zero-padded to four digits (shard_0000 .. shard_8191), so that
-- schema names sort in shard order.  shardid_provision_shard() copies every
-- table of a template schema into it and gives each table its own sequence,
-- with id DEFAULT shardid_next(n, '<schema>.<table>_id_seq').  Running it
-- again creates only what is missing.
--

CREATE FUNCTION shardid_shard_schema(shard pg_catalog.int4)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
	IF shard OPERATOR(pg_catalog.<) 0 OR shard OPERATOR(pg_catalog.>) 8191 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'numeric_value_out_of_range',
			MESSAGE = pg_catalog.format('shard ID %s is out of range', shard),
			DETAIL = 'Valid shard IDs are 0 to 8191.';
	END IF;
	RETURN 'shard_' OPERATOR(pg_catalog.||) pg_catalog.lpad(shard::pg_catalog.text, 4, '0');
END
$fn$;

COMMENT ON FUNCTION shardid_shard_schema(pg_catalog.int4) IS
'default schema of a logical shard: shard_ and the shard number zero-padded to four digits';

-- shardid_provision_shard() trusts only objects owned by the role that
-- provisions or by a superuser: a role that pre-created shard_NNNN with a
-- matching table and a trigger of its own would otherwise get that trigger
-- run by the next INSERT of whoever provisioned.  It refuses with 42501
-- anything owned by another role and any grant that lets another role
-- attach code later (CREATE on the schema, TRIGGER on a table), and with
-- 55000 any trigger, rule, policy or inheritance child that the template
-- lacks.  The same trust applies to the template, whose defaults,
-- constraints and indexes are copied into every shard.
--
-- A named owner: run it as that role (SET ROLE owner; shardid-fleet apply
-- --owner does so), and everything it creates belongs to that role.
--
-- Names are counted in bytes: a table's sequence is <table>_id_seq while
-- that fits in max_identifier_length (63) bytes; longer table names get
-- the longest whole-character prefix that fits, "_", the first 8 hex
-- digits of md5(<table>), and "_id_seq", so two tables that share a long
-- prefix get different sequences.  Any clash left (a table named like
-- another's sequence) is refused before anything is made.
--
-- A template table that is range-partitioned on id (PARTITION BY RANGE
-- (id)) is provisioned as a partitioned parent with the same key and no
-- partitions (LIKE does not copy partitioning); partitions that are later
-- added to a shard's parent, in its schema, are accepted on a rerun.
--

CREATE FUNCTION shardid_provision_shard(shard pg_catalog.int4,
                                        template_schema pg_catalog.text,
                                        schema_name pg_catalog.text DEFAULT NULL,
                                        OUT kind pg_catalog.text,
                                        OUT name pg_catalog.text,
                                        OUT action pg_catalog.text)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	me pg_catalog.oid;
	trusted pg_catalog.oid[];
	maxlen pg_catalog.int4;
	ext_schema pg_catalog.text;
	target pg_catalog.text;
	tmpl_oid pg_catalog.oid;
	target_oid pg_catalog.oid;
	tbl record;
	other record;
	tables pg_catalog.text[] := '{}';
	seqs pg_catalog.text[] := '{}';
	kinds pg_catalog."char"[] := '{}';
	tmpl_oids pg_catalog.oid[] := '{}';
	target_rels pg_catalog.oid[] := '{}';
	i pg_catalog.int4;
	j pg_catalog.int4;
	prefix pg_catalog.text;
	seq_name pg_catalog.text;
	shard_rel pg_catalog.oid;
	want_cols pg_catalog.text;
	have_cols pg_catalog.text;
	want_default pg_catalog.text;
	have_default pg_catalog.text;
	res_kind pg_catalog.text[] := '{}';
	res_name pg_catalog.text[] := '{}';
	res_action pg_catalog.text[] := '{}';
	res_ord pg_catalog.int4[] := '{}';
	tmpl_prefix pg_catalog.text;
	target_prefix pg_catalog.text;
	int8_btree_ops pg_catalog.oid;
BEGIN
	IF shard IS NULL OR template_schema IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'shard and template schema must not be null';
	END IF;
	-- the default name, which also checks that the shard is in range
	target := @extschema@.shardid_shard_schema(shard);
	target := COALESCE(schema_name, target);

	-- Names are limited in bytes, not characters; a longer name would be
	-- truncated by CREATE SCHEMA and then not found again.
	maxlen := pg_catalog.current_setting('max_identifier_length')::pg_catalog.int4;
	IF pg_catalog.octet_length(target) OPERATOR(pg_catalog.>) maxlen THEN
		RAISE EXCEPTION USING
			ERRCODE = 'name_too_long',
			MESSAGE = pg_catalog.format('schema name "%s" is too long', target),
			DETAIL = pg_catalog.format('It has %s bytes; names have at most %s.',
									   pg_catalog.octet_length(target), maxlen);
	END IF;

	-- Whose objects may be taken as they are: the caller's own and
	-- superusers' (a superuser's object can do nothing the caller could not
	-- be made to do anyway).
	SELECT r.oid INTO me FROM pg_catalog.pg_roles AS r
	 WHERE r.rolname OPERATOR(pg_catalog.=) current_user;
	trusted := ARRAY(SELECT r.oid FROM pg_catalog.pg_roles AS r
					  WHERE r.rolsuper OR r.oid OPERATOR(pg_catalog.=) me);

	SELECT n.nspname INTO ext_schema
	  FROM pg_catalog.pg_extension AS e
	  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
	 WHERE e.extname OPERATOR(pg_catalog.=) 'shardid';

	SELECT n.oid INTO tmpl_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname OPERATOR(pg_catalog.=) template_schema;
	IF tmpl_oid IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_schema_name',
			MESSAGE = pg_catalog.format('template schema "%s" does not exist', template_schema),
			HINT = 'Create the template''s tables in a schema of their own and pass its name.';
	END IF;
	IF target OPERATOR(pg_catalog.=) template_schema THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('schema "%s" is the template schema', target),
			DETAIL = 'A logical shard needs a schema of its own.';
	END IF;
	FOR other IN
		SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner
		  FROM pg_catalog.pg_namespace AS n
		 WHERE n.oid OPERATOR(pg_catalog.=) tmpl_oid
		   AND NOT n.nspowner OPERATOR(pg_catalog.=) ANY (trusted)
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('template schema "%s" is owned by role "%s"',
										template_schema, other.owner),
			DETAIL = pg_catalog.format('Every shard copies the template''s tables; a template must be owned by the role that provisions (%s) or by a superuser.',
									   current_user);
	END LOOP;

	-- one provisioning of a shard at a time; "SHID" in ASCII is the class
	PERFORM pg_catalog.pg_advisory_xact_lock(1397246276, shard);

	-- The template: tables and partitioned tables (not their partitions),
	-- each with a plain bigint column "id", owned by a trusted role, and
	-- partitioned, if at all, by RANGE (id).
	SELECT c.oid INTO int8_btree_ops
	  FROM pg_catalog.pg_opclass AS c
	  JOIN pg_catalog.pg_am AS a ON a.oid OPERATOR(pg_catalog.=) c.opcmethod
	 WHERE a.amname OPERATOR(pg_catalog.=) 'btree' AND c.opcdefault
	   AND c.opcintype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype;
	-- (What a schema holds is found through pg_depend, which is indexed
	-- on the schema; pg_class is not.)
	FOR tbl IN
		SELECT c.oid, c.relname, c.relkind, c.relowner
		  FROM pg_catalog.pg_class AS c
		 WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY(
				SELECT d.objid FROM pg_catalog.pg_depend AS d
				 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
				   AND d.refobjid OPERATOR(pg_catalog.=) tmpl_oid
				   AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass))
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
		   AND NOT c.relispartition
		 ORDER BY c.relname
	LOOP
		IF NOT tbl.relowner OPERATOR(pg_catalog.=) ANY (trusted) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('template table "%s.%s" is owned by role "%s"',
											template_schema, tbl.relname,
											pg_catalog.pg_get_userbyid(tbl.relowner)),
				DETAIL = pg_catalog.format('Every shard copies the template''s defaults, constraints and indexes; a template must be owned by the role that provisions (%s) or by a superuser.',
										   current_user);
		END IF;
		IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
						WHERE a.attrelid OPERATOR(pg_catalog.=) tbl.oid
						  AND a.attname OPERATOR(pg_catalog.=) 'id'
						  AND NOT a.attisdropped
						  AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('template table "%s.%s" has no bigint column "id"',
											template_schema, tbl.relname),
				DETAIL = 'Every table of a template gets its IDs from shardid_next() in column "id".';
		END IF;
		IF EXISTS (SELECT FROM pg_catalog.pg_attribute AS a
					WHERE a.attrelid OPERATOR(pg_catalog.=) tbl.oid
					  AND a.attname OPERATOR(pg_catalog.=) 'id'
					  AND (a.attidentity OPERATOR(pg_catalog.<>) '' OR a.attgenerated OPERATOR(pg_catalog.<>) '')) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('column "id" of template table "%s.%s" is an identity or generated column',
											template_schema, tbl.relname),
				HINT = 'Declare "id" as a plain bigint column; provisioning gives it its default.';
		END IF;
		IF tbl.relkind OPERATOR(pg_catalog.=) 'p' AND NOT EXISTS (
			SELECT FROM pg_catalog.pg_partitioned_table AS pt
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid OPERATOR(pg_catalog.=) pt.partrelid
			   AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
			 WHERE pt.partrelid OPERATOR(pg_catalog.=) tbl.oid
			   AND pt.partstrat OPERATOR(pg_catalog.=) 'r'
			   AND pt.partnatts OPERATOR(pg_catalog.=) 1
			   AND a.attname OPERATOR(pg_catalog.=) 'id'
			   AND pt.partclass[0] OPERATOR(pg_catalog.=) int8_btree_ops
			   AND pt.partexprs IS NULL) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('template table "%s.%s" is partitioned by %s, not by RANGE (id)',
											template_schema, tbl.relname,
											pg_catalog.pg_get_partkeydef(tbl.oid)),
				DETAIL = 'A partitioned template table must be partitioned by RANGE (id), so that its partitions are ranges of IDs, which is to say of time.';
		END IF;

		-- its sequence's name, in bytes
		IF (pg_catalog.octet_length(tbl.relname) OPERATOR(pg_catalog.+) 7) OPERATOR(pg_catalog.<=) maxlen THEN
			seq_name := tbl.relname OPERATOR(pg_catalog.||) '_id_seq';
		ELSE
			prefix := tbl.relname;
			WHILE pg_catalog.octet_length(prefix) OPERATOR(pg_catalog.>) (maxlen OPERATOR(pg_catalog.-) 16) LOOP
				prefix := pg_catalog.left(prefix, -1);
			END LOOP;
			seq_name := prefix OPERATOR(pg_catalog.||) '_'
						OPERATOR(pg_catalog.||) pg_catalog.left(pg_catalog.md5(tbl.relname), 8)
						OPERATOR(pg_catalog.||) '_id_seq';
		END IF;
		tables := tables OPERATOR(pg_catalog.||) tbl.relname::pg_catalog.text;
		seqs := seqs OPERATOR(pg_catalog.||) seq_name;
		kinds := kinds OPERATOR(pg_catalog.||) tbl.relkind;
		tmpl_oids := tmpl_oids OPERATOR(pg_catalog.||) tbl.oid;
	END LOOP;
	IF pg_catalog.cardinality(tables) OPERATOR(pg_catalog.=) 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('template schema "%s" has no tables', template_schema);
	END IF;
	-- No two of the names provisioning makes may clash.
	FOR i IN 1 .. pg_catalog.cardinality(tables) LOOP
		FOR j IN 1 .. pg_catalog.cardinality(tables) LOOP
			IF seqs[i] OPERATOR(pg_catalog.=) tables[j]
			   OR (i OPERATOR(pg_catalog.<) j AND seqs[i] OPERATOR(pg_catalog.=) seqs[j]) THEN
				RAISE EXCEPTION USING
					ERRCODE = 'invalid_table_definition',
					MESSAGE = pg_catalog.format('the ID sequence of template table "%s.%s" would be named "%s", as %s "%s" is',
												template_schema, tables[i], seqs[i],
												CASE WHEN seqs[i] OPERATOR(pg_catalog.=) tables[j]
													 THEN 'template table' ELSE 'the ID sequence of template table' END,
												tables[j]),
					HINT = 'Rename one of the template tables.';
			END IF;
		END LOOP;
	END LOOP;

	tmpl_prefix := pg_catalog.quote_ident(template_schema) OPERATOR(pg_catalog.||) '.';
	target_prefix := pg_catalog.quote_ident(target) OPERATOR(pg_catalog.||) '.';

	SELECT n.oid INTO target_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname OPERATOR(pg_catalog.=) target;
	IF target_oid IS NULL THEN
		EXECUTE pg_catalog.format('CREATE SCHEMA %I', target);
		SELECT n.oid INTO target_oid
		  FROM pg_catalog.pg_namespace AS n
		 WHERE n.nspname OPERATOR(pg_catalog.=) target;
		res_kind := res_kind OPERATOR(pg_catalog.||) 'schema'::pg_catalog.text;
		res_name := res_name OPERATOR(pg_catalog.||) pg_catalog.quote_ident(target);
		res_action := res_action OPERATOR(pg_catalog.||) 'created'::pg_catalog.text;
		res_ord := res_ord OPERATOR(pg_catalog.||) 0;
	ELSE
		res_kind := res_kind OPERATOR(pg_catalog.||) 'schema'::pg_catalog.text;
		res_name := res_name OPERATOR(pg_catalog.||) pg_catalog.quote_ident(target);
		res_action := res_action OPERATOR(pg_catalog.||) 'exists'::pg_catalog.text;
		res_ord := res_ord OPERATOR(pg_catalog.||) 0;

		-- Whose is it?  An existing schema is taken as it is only when the
		-- caller or a superuser owns it and everything in it.
		target_rels := ARRAY(
			SELECT d.objid FROM pg_catalog.pg_depend AS d
			 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
			   AND d.refobjid OPERATOR(pg_catalog.=) target_oid
			   AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass);
		FOR other IN
			SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner
			  FROM pg_catalog.pg_namespace AS n
			 WHERE n.oid OPERATOR(pg_catalog.=) target_oid
			   AND NOT n.nspowner OPERATOR(pg_catalog.=) ANY (trusted)
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('schema "%s" is owned by role "%s"', target, other.owner),
				DETAIL = pg_catalog.format('Provisioning takes an existing schema as it is only when it is owned by the role that provisions (%s) or by a superuser.',
										   current_user),
				HINT = 'Drop or rename the schema, or provision as its owner.';
		END LOOP;
		FOR other IN
			SELECT c.relname, pg_catalog.pg_get_userbyid(c.relowner) AS owner
			  FROM pg_catalog.pg_class AS c
			 WHERE c.oid OPERATOR(pg_catalog.=) ANY (target_rels)
			   AND NOT c.relowner OPERATOR(pg_catalog.=) ANY (trusted)
			 ORDER BY c.relname
			 LIMIT 1
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('relation "%s.%s" is owned by role "%s"', target, other.relname, other.owner),
				DETAIL = pg_catalog.format('Provisioning takes an existing schema as it is only when everything in it is owned by the role that provisions (%s) or by a superuser.',
										   current_user),
				HINT = 'Drop or rename the schema, or provision as its owner.';
		END LOOP;

		-- It may hold only what provisioning makes: the template's tables
		-- (with their indexes, row types and extended statistics), their
		-- ID sequences, and partitions added to partitioned ones.
		FOR other IN
			SELECT c.relname, c.relkind
			  FROM pg_catalog.pg_class AS c
			 WHERE c.oid OPERATOR(pg_catalog.=) ANY (target_rels)
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
						AND NOT c.relispartition
						AND c.relname OPERATOR(pg_catalog.=) ANY (tables))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) 'S'
						AND c.relname OPERATOR(pg_catalog.=) ANY (seqs))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
						AND c.relispartition
						AND EXISTS (SELECT FROM pg_catalog.pg_class AS root
									 WHERE root.oid OPERATOR(pg_catalog.=) pg_catalog.pg_partition_root(c.oid)
									   AND root.relnamespace OPERATOR(pg_catalog.=) target_oid
									   AND root.relkind OPERATOR(pg_catalog.=) 'p'
									   AND root.relname OPERATOR(pg_catalog.=) ANY (tables)))
			   AND NOT (c.relkind OPERATOR(pg_catalog.=) ANY ('{i,I}'::pg_catalog."char"[])
						AND EXISTS (SELECT FROM pg_catalog.pg_index AS x
									  JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) x.indrelid
									 WHERE x.indexrelid OPERATOR(pg_catalog.=) c.oid
									   AND t.relnamespace OPERATOR(pg_catalog.=) target_oid
									   AND t.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])))
			 ORDER BY c.relname
			 LIMIT 1
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Relation "%s.%s" is not a table of template "%s" or its ID sequence.',
										   target, other.relname, template_schema),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END LOOP;

		-- Anything else in it: functions, types, operators, statistics
		-- objects not of its tables, extensions...
		FOR other IN
			SELECT CASE WHEN d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
						THEN d.objid::pg_catalog.regprocedure::pg_catalog.text
						ELSE pg_catalog.pg_describe_object(d.classid, d.objid, 0) END AS what
			  FROM pg_catalog.pg_depend AS d
			 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
			   AND d.refobjid OPERATOR(pg_catalog.=) target_oid
			   AND d.classid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_class'::pg_catalog.regclass
			   AND NOT (d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass
						AND EXISTS (SELECT FROM pg_catalog.pg_statistic_ext AS se
									  JOIN pg_catalog.pg_class AS t ON t.oid OPERATOR(pg_catalog.=) se.stxrelid
									 WHERE se.oid OPERATOR(pg_catalog.=) d.objid
									   AND t.relnamespace OPERATOR(pg_catalog.=) target_oid
									   AND se.stxowner OPERATOR(pg_catalog.=) t.relowner))
			 ORDER BY 1
			LIMIT 1
		LOOP
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Object %s is not a table of template "%s" or its ID sequence.',
										   other.what, template_schema),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END LOOP;

		-- Each existing table: as the template has it, and with nothing
		-- attached that the template lacks.  (LIKE copies no triggers,
		-- rules or policies, so those of a shard table must be ones the
		-- owner added as the template has them.)
		FOR i IN 1 .. pg_catalog.cardinality(tables) LOOP
			SELECT c.oid INTO shard_rel
			  FROM pg_catalog.pg_class AS c
			 WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
			   AND c.relname OPERATOR(pg_catalog.=) tables[i];
			CONTINUE WHEN shard_rel IS NULL;

			FOR other IN
				SELECT c.relkind, c.relpersistence, t.relkind AS want_kind, t.relpersistence AS want_persistence,
					   pg_catalog.pg_get_partkeydef(c.oid) AS partkey
				  FROM pg_catalog.pg_class AS c, pg_catalog.pg_class AS t
				 WHERE c.oid OPERATOR(pg_catalog.=) shard_rel
				   AND t.oid OPERATOR(pg_catalog.=) tmpl_oids[i]
				   AND (c.relkind OPERATOR(pg_catalog.<>) t.relkind
						OR c.relpersistence OPERATOR(pg_catalog.<>) t.relpersistence
						OR pg_catalog.pg_get_partkeydef(c.oid) IS DISTINCT FROM pg_catalog.pg_get_partkeydef(t.oid))
			LOOP
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Table "%s.%s" is %s, template table "%s.%s" is %s.',
						target, tables[i],
						CASE other.relkind WHEN 'p' THEN 'partitioned by ' OPERATOR(pg_catalog.||) other.partkey
										   ELSE 'not partitioned' END
						OPERATOR(pg_catalog.||) CASE other.relpersistence WHEN 'u' THEN ' and unlogged' ELSE '' END,
						template_schema, tables[i],
						CASE other.want_kind WHEN 'p' THEN 'partitioned by RANGE (id)' ELSE 'not partitioned' END
						OPERATOR(pg_catalog.||) CASE other.want_persistence WHEN 'u' THEN ' and unlogged' ELSE '' END),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END LOOP;

			-- triggers: the template's, as it has them, and on partitions
			-- only clones of the parent's
			FOR other IN
				SELECT c.relname, s.tgname
				  FROM (SELECT shard_rel AS relid, 0 AS level
						UNION ALL
						SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
						 WHERE x.level OPERATOR(pg_catalog.>) 0) AS pt
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) pt.relid
				  JOIN pg_catalog.pg_trigger AS s ON s.tgrelid OPERATOR(pg_catalog.=) pt.relid
				 WHERE NOT s.tgisinternal
				   AND CASE WHEN pt.level OPERATOR(pg_catalog.>) 0
							THEN s.tgparentid OPERATOR(pg_catalog.=) 0
							ELSE NOT EXISTS (
								SELECT FROM pg_catalog.pg_trigger AS t
								 WHERE t.tgrelid OPERATOR(pg_catalog.=) tmpl_oids[i]
								   AND t.tgname OPERATOR(pg_catalog.=) s.tgname
								   AND t.tgfoid OPERATOR(pg_catalog.=) s.tgfoid
								   AND t.tgenabled OPERATOR(pg_catalog.=) s.tgenabled
								   AND pg_catalog.replace(pg_catalog.pg_get_triggerdef(t.oid), tmpl_prefix, target_prefix)
									   OPERATOR(pg_catalog.=) pg_catalog.pg_get_triggerdef(s.oid))
					   END
				 ORDER BY pt.level, c.relname, s.tgname
				 LIMIT 1
			LOOP
				RAISE EXCEPTION USING
					ERRCODE = 'object_not_in_prerequisite_state',
					MESSAGE = pg_catalog.format('table "%s.%s" has trigger "%s", which template table "%s.%s" lacks',
												target, other.relname, other.tgname, template_schema, tables[i]),
					DETAIL = 'A trigger runs its function in the session of whoever writes to the table.',
					HINT = 'Drop the trigger, or drop or rename the schema.';
			END LOOP;

			-- rules and row security policies: the template's, as it has them
			FOR other IN
				SELECT c.relname, 'rule' AS what, r.rulename AS objname
				  FROM (SELECT shard_rel AS relid, 0 AS level
						UNION ALL
						SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
						 WHERE x.level OPERATOR(pg_catalog.>) 0) AS pt
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) pt.relid
				  JOIN pg_catalog.pg_rewrite AS r ON r.ev_class OPERATOR(pg_catalog.=) pt.relid
				 WHERE pt.level OPERATOR(pg_catalog.>) 0
					OR NOT EXISTS (
						SELECT FROM pg_catalog.pg_rewrite AS t
						 WHERE t.ev_class OPERATOR(pg_catalog.=) tmpl_oids[i]
						   AND t.rulename OPERATOR(pg_catalog.=) r.rulename
						   AND t.ev_enabled OPERATOR(pg_catalog.=) r.ev_enabled
						   AND pg_catalog.replace(pg_catalog.pg_get_ruledef(t.oid), tmpl_prefix, target_prefix)
							   OPERATOR(pg_catalog.=) pg_catalog.pg_get_ruledef(r.oid))
				UNION ALL
				SELECT c.relname, 'policy', p.polname
				  FROM (SELECT shard_rel AS relid, 0 AS level
						UNION ALL
						SELECT x.relid, x.level FROM pg_catalog.pg_partition_tree(shard_rel) AS x
						 WHERE x.level OPERATOR(pg_catalog.>) 0) AS pt
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) pt.relid
				  JOIN pg_catalog.pg_policy AS p ON p.polrelid OPERATOR(pg_catalog.=) pt.relid
				 WHERE pt.level OPERATOR(pg_catalog.>) 0
					OR NOT EXISTS (
						SELECT FROM pg_catalog.pg_policy AS t
						 WHERE t.polrelid OPERATOR(pg_catalog.=) tmpl_oids[i]
						   AND t.polname OPERATOR(pg_catalog.=) p.polname
						   AND t.polcmd OPERATOR(pg_catalog.=) p.polcmd
						   AND t.polpermissive OPERATOR(pg_catalog.=) p.polpermissive
						   AND t.polroles OPERATOR(pg_catalog.=) p.polroles
						   AND pg_catalog.replace(COALESCE(pg_catalog.pg_get_expr(t.polqual, t.polrelid), ''), tmpl_prefix, target_prefix)
							   OPERATOR(pg_catalog.=) COALESCE(pg_catalog.pg_get_expr(p.polqual, p.polrelid), '')
						   AND pg_catalog.replace(COALESCE(pg_catalog.pg_get_expr(t.polwithcheck, t.polrelid), ''), tmpl_prefix, target_prefix)
							   OPERATOR(pg_catalog.=) COALESCE(pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid), ''))
				UNION ALL
				-- inheritance (not partitioning) in either direction
				SELECT c.relname, 'inheritance child', k.relname
				  FROM pg_catalog.pg_inherits AS h
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) h.inhparent
				  JOIN pg_catalog.pg_class AS k ON k.oid OPERATOR(pg_catalog.=) h.inhrelid
				 WHERE h.inhparent OPERATOR(pg_catalog.=) shard_rel AND NOT k.relispartition
				UNION ALL
				SELECT c.relname, 'inheritance parent', k.relname
				  FROM pg_catalog.pg_inherits AS h
				  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) h.inhrelid
				  JOIN pg_catalog.pg_class AS k ON k.oid OPERATOR(pg_catalog.=) h.inhparent
				 WHERE h.inhrelid OPERATOR(pg_catalog.=) shard_rel
				LIMIT 1
			LOOP
				RAISE EXCEPTION USING
					ERRCODE = 'object_not_in_prerequisite_state',
					MESSAGE = pg_catalog.format('table "%s.%s" has %s "%s", which template table "%s.%s" lacks',
												target, other.relname, other.what, other.objname,
												template_schema, tables[i]),
					DETAIL = 'Provisioning takes an existing table as it is only when nothing the template lacks is attached to it.',
					HINT = pg_catalog.format('Drop the %s, or drop or rename the schema.', other.what);
			END LOOP;
		END LOOP;
	END IF;

	-- Create what is missing, and check what is there: each table with
	-- its sequence.  Longer names first: an index that LIKE names after a
	-- short table (posts_pkey) then cannot take the name of a longer one.
	FOR i IN
		SELECT o.n
		  FROM pg_catalog.generate_subscripts(tables, 1) AS o(n)
		 ORDER BY pg_catalog.octet_length(tables[o.n]) DESC, tables[o.n]
	LOOP
		seq_name := seqs[i];
		want_default := pg_catalog.format('%I.shardid_next(%s, %L::regclass)',
										  ext_schema, shard,
										  pg_catalog.format('%I.%I', target, seq_name));
		shard_rel := NULL;
		SELECT c.oid INTO shard_rel
		  FROM pg_catalog.pg_class AS c
		 WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
		   AND c.relname OPERATOR(pg_catalog.=) tables[i];

		IF shard_rel IS NOT NULL THEN
			-- It must match the template column for column, and number its
			-- IDs from its own sequence for this shard.
			SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
								pg_catalog.format_type(a.atttypid, a.atttypmod),
								CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
								', ' ORDER BY a.attnum)
			  INTO want_cols
			  FROM pg_catalog.pg_attribute AS a
			 WHERE a.attrelid OPERATOR(pg_catalog.=) tmpl_oids[i]
			   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
			SELECT pg_catalog.string_agg(pg_catalog.format('%I %s%s', a.attname,
								pg_catalog.format_type(a.atttypid, a.atttypmod),
								CASE WHEN a.attnotnull THEN ' not null' ELSE '' END),
								', ' ORDER BY a.attnum)
			  INTO have_cols
			  FROM pg_catalog.pg_attribute AS a
			 WHERE a.attrelid OPERATOR(pg_catalog.=) shard_rel
			   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
			IF have_cols IS DISTINCT FROM want_cols THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Table "%s.%s" has columns (%s), template "%s" has (%s).',
											   target, tables[i], have_cols, template_schema, want_cols),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;

			SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) INTO have_default
			  FROM pg_catalog.pg_attrdef AS d
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid OPERATOR(pg_catalog.=) d.adrelid
			   AND a.attnum OPERATOR(pg_catalog.=) d.adnum
			 WHERE d.adrelid OPERATOR(pg_catalog.=) shard_rel
			   AND a.attname OPERATOR(pg_catalog.=) 'id';
			IF have_default IS DISTINCT FROM want_default THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Column "id" of table "%s.%s" defaults to %s, not %s.',
											   target, tables[i],
											   COALESCE(have_default, 'null'), want_default),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;
			IF NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
							WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
							  AND c.relname OPERATOR(pg_catalog.=) seq_name
							  AND c.relkind OPERATOR(pg_catalog.=) 'S') THEN
				RAISE EXCEPTION USING
					ERRCODE = 'duplicate_schema',
					MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
					DETAIL = pg_catalog.format('Table "%s.%s" exists without its sequence "%s".',
											   target, tables[i], seq_name),
					HINT = 'Drop or rename the schema, or provision the shard into another schema.';
			END IF;

			res_kind := res_kind OPERATOR(pg_catalog.||) ARRAY['table', 'sequence'];
			res_name := res_name OPERATOR(pg_catalog.||) ARRAY[pg_catalog.format('%I.%I', target, tables[i]),
															   pg_catalog.format('%I.%I', target, seq_name)];
			res_action := res_action OPERATOR(pg_catalog.||) ARRAY['exists', 'exists'];
			res_ord := res_ord OPERATOR(pg_catalog.||) ARRAY[2 OPERATOR(pg_catalog.*) i, (2 OPERATOR(pg_catalog.*) i) OPERATOR(pg_catalog.+) 1];
			CONTINUE;
		END IF;

		IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
					WHERE c.relnamespace OPERATOR(pg_catalog.=) target_oid
					  AND c.relname OPERATOR(pg_catalog.=) seq_name) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'duplicate_schema',
				MESSAGE = pg_catalog.format('schema "%s" exists with other contents', target),
				DETAIL = pg_catalog.format('Sequence "%s.%s" exists without its table "%s".',
										   target, seq_name, tables[i]),
				HINT = 'Drop or rename the schema, or provision the shard into another schema.';
		END IF;

		EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS pg_catalog.int8', target, seq_name);
		IF kinds[i] OPERATOR(pg_catalog.=) 'p' THEN
			-- LIKE copies no partitioning: the parent gets the template's
			-- key (checked above to be RANGE (id)) and no partitions.
			EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL) PARTITION BY RANGE (id)',
									  target, tables[i], template_schema, tables[i]);
		ELSE
			EXECUTE pg_catalog.format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING ALL)',
									  target, tables[i], template_schema, tables[i]);
		END IF;
		EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN id SET DEFAULT %s',
								  target, tables[i], want_default);
		EXECUTE pg_catalog.format('ALTER SEQUENCE %I.%I OWNED BY %I.%I.id',
								  target, seq_name, target, tables[i]);

		res_kind := res_kind OPERATOR(pg_catalog.||) ARRAY['table', 'sequence'];
		res_name := res_name OPERATOR(pg_catalog.||) ARRAY[pg_catalog.format('%I.%I', target, tables[i]),
														   pg_catalog.format('%I.%I', target, seq_name)];
		res_action := res_action OPERATOR(pg_catalog.||) ARRAY['created', 'created'];
		res_ord := res_ord OPERATOR(pg_catalog.||) ARRAY[2 OPERATOR(pg_catalog.*) i, (2 OPERATOR(pg_catalog.*) i) OPERATOR(pg_catalog.+) 1];
	END LOOP;

	-- Grants, on what was there and on what was just made (default
	-- privileges apply to that): no other role may hold a privilege that
	-- lets it attach code to the shard later, CREATE on the schema or
	-- TRIGGER on a table.
	target_rels := ARRAY(
		SELECT d.objid FROM pg_catalog.pg_depend AS d
		 WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
		   AND d.refobjid OPERATOR(pg_catalog.=) target_oid
		   AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass);
	FOR other IN
		SELECT 'schema' AS what, pg_catalog.quote_ident(n.nspname) AS objname, a.grantee, a.privilege_type
		  FROM pg_catalog.pg_namespace AS n, pg_catalog.aclexplode(n.nspacl) AS a
		 WHERE n.oid OPERATOR(pg_catalog.=) target_oid
		   AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
		   AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
		   AND NOT a.grantee OPERATOR(pg_catalog.=) ANY (trusted)
		UNION ALL
		SELECT 'table', pg_catalog.format('%I.%I', target, c.relname), a.grantee, a.privilege_type
		  FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
		 WHERE c.oid OPERATOR(pg_catalog.=) ANY (target_rels)
		   AND c.relkind OPERATOR(pg_catalog.=) ANY ('{r,p}'::pg_catalog."char"[])
		   AND a.privilege_type OPERATOR(pg_catalog.=) 'TRIGGER'
		   AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
		   AND NOT a.grantee OPERATOR(pg_catalog.=) ANY (trusted)
		 ORDER BY 1 DESC, 2		-- the schema first, then tables by name
		LIMIT 1
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('%s %s grants %s to %s', other.what, other.objname, other.privilege_type,
										CASE other.grantee WHEN 0 THEN 'PUBLIC'
										ELSE pg_catalog.format('role "%s"', pg_catalog.pg_get_userbyid(other.grantee)) END),
			DETAIL = CASE other.privilege_type
					 WHEN 'CREATE' THEN 'A role that may create objects in a shard''s schema can put its own objects where the shard''s users look for the template''s.'
					 ELSE 'A role that may create triggers on a shard''s table can run its own code in the session of whoever writes to it.' END,
			HINT = pg_catalog.format('REVOKE %s ON %s %s FROM %s, or check the default privileges (ALTER DEFAULT PRIVILEGES).',
									 other.privilege_type, CASE other.what WHEN 'schema' THEN 'SCHEMA' ELSE 'TABLE' END,
									 other.objname,
									 CASE other.grantee WHEN 0 THEN 'PUBLIC'
									 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(other.grantee)) END);
	END LOOP;

	RETURN QUERY
		SELECT r.k, r.n, r.a
		  FROM ROWS FROM (pg_catalog.unnest(res_kind), pg_catalog.unnest(res_name),
						 pg_catalog.unnest(res_action), pg_catalog.unnest(res_ord)) AS r(k, n, a, o)
		 ORDER BY r.o;
END
$fn$;

COMMENT ON FUNCTION shardid_provision_shard(pg_catalog.int4, pg_catalog.text, pg_catalog.text) IS
'create what is missing of a logical shard: its schema (default shard_NNNN), a copy of each template table and its ID sequence; takes existing objects only from the caller or a superuser';

--
-- Adopting existing tables
--
-- shardid_adopt() turns the bigint key of an existing table (bigserial, a
-- bigint column fed by nextval(), or an identity column) into a shardid
-- key: the column's own sequence, OWNED BY it, feeds shardid_next().
--

CREATE FUNCTION shardid_adopt(tbl pg_catalog.regclass,
                              shard pg_catalog.int4,
                              col pg_catalog.name DEFAULT 'id',
                              OUT sequence pg_catalog.regclass,
                              OUT action pg_catalog.text,
                              OUT previous_default pg_catalog.text)
RETURNS pg_catalog.record
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	ext_schema pg_catalog.text;
	rel record;
	att record;
	dep record;
	owned pg_catalog.oid;			-- the sequence OWNED BY the column
	identity_seq pg_catalog.oid;	-- the identity's own sequence
	restart pg_catalog.int8;		-- where a replacing sequence goes on
	want_default pg_catalog.text;
	max_id pg_catalog.int8;
	first_id pg_catalog.int8;
	seq_name pg_catalog.text;
	part pg_catalog.text;
	n pg_catalog.int4 := 0;
	grantee record;
BEGIN
	-- the shard: shardid_shard_schema() refuses one out of range (22003)
	PERFORM @extschema@.shardid_shard_schema(shard);

	SELECT c.relname, c.relkind, c.relowner, ns.nspname
	  INTO rel
	  FROM pg_catalog.pg_class AS c
	  JOIN pg_catalog.pg_namespace AS ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
	 WHERE c.oid OPERATOR(pg_catalog.=) tbl;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'undefined_table',
			MESSAGE = pg_catalog.format('relation with OID %s does not exist', tbl::pg_catalog.oid);
	END IF;
	IF rel.relkind OPERATOR(pg_catalog.<>) ALL (ARRAY['r', 'p']::pg_catalog."char"[]) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'wrong_object_type',
			MESSAGE = pg_catalog.format('"%s" is not a table', tbl);
	END IF;
	IF NOT pg_catalog.pg_has_role(rel.relowner, 'USAGE') THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('must be owner of table %s', tbl),
			DETAIL = 'shardid_adopt changes the column''s default, which only the table''s owner may do.';
	END IF;

	-- Writers wait, readers go on, while max(col) is read; ALTER TABLE
	-- then takes its own, brief, exclusive lock.
	EXECUTE pg_catalog.format('LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE', tbl);

	SELECT a.attnum, a.atttypid, a.attidentity, a.attgenerated
	  INTO att
	  FROM pg_catalog.pg_attribute AS a
	 WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attname OPERATOR(pg_catalog.=) col
	   AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'undefined_column',
			MESSAGE = pg_catalog.format('column "%s" of relation %s does not exist', col, tbl);
	END IF;
	IF att.atttypid OPERATOR(pg_catalog.<>) 'pg_catalog.int8'::pg_catalog.regtype THEN
		RAISE EXCEPTION USING
			ERRCODE = 'datatype_mismatch',
			MESSAGE = pg_catalog.format('column "%s" of relation %s is of type %s, not bigint',
										col, tbl, pg_catalog.format_type(att.atttypid, NULL)),
			DETAIL = 'shardid IDs are 64-bit: they need a bigint column.',
			HINT = pg_catalog.format('Change its type first: ALTER TABLE %s ALTER COLUMN %I TYPE bigint.', tbl, col);
	END IF;
	IF att.attgenerated OPERATOR(pg_catalog.<>) '' THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_table_definition',
			MESSAGE = pg_catalog.format('column "%s" of relation %s is a generated column', col, tbl);
	END IF;

	SELECT ns.nspname INTO ext_schema
	  FROM pg_catalog.pg_extension AS e
	  JOIN pg_catalog.pg_namespace AS ns ON ns.oid OPERATOR(pg_catalog.=) e.extnamespace
	 WHERE e.extname OPERATOR(pg_catalog.=) 'shardid';

	previous_default := CASE att.attidentity
		WHEN 'a' THEN 'GENERATED ALWAYS AS IDENTITY'
		WHEN 'd' THEN 'GENERATED BY DEFAULT AS IDENTITY'
		ELSE pg_catalog.pg_get_expr(
			(SELECT d.adbin FROM pg_catalog.pg_attrdef AS d
			  WHERE d.adrelid OPERATOR(pg_catalog.=) tbl AND d.adnum OPERATOR(pg_catalog.=) att.attnum),
			tbl) END;

	-- The sequence the column owns: bigserial's (an auto dependency), or
	-- an identity's (an internal one).
	FOR dep IN
		SELECT d.objid, d.deptype
		  FROM pg_catalog.pg_depend AS d
		  JOIN pg_catalog.pg_class AS s ON s.oid OPERATOR(pg_catalog.=) d.objid
		 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
		   AND d.refobjid OPERATOR(pg_catalog.=) tbl
		   AND d.refobjsubid OPERATOR(pg_catalog.=) att.attnum
		   AND d.deptype OPERATOR(pg_catalog.=) ANY (ARRAY['a', 'i']::pg_catalog."char"[])
		   AND s.relkind OPERATOR(pg_catalog.=) 'S'
	LOOP
		IF dep.deptype OPERATOR(pg_catalog.=) 'i' THEN
			identity_seq := dep.objid;
		ELSE
			owned := dep.objid;
		END IF;
	END LOOP;

	-- Already a shardid column on its own sequence: nothing to do, if it
	-- is for this shard.
	IF owned IS NOT NULL THEN
		want_default := pg_catalog.format('%I.shardid_next(%s, %L::regclass)',
										  ext_schema, shard, owned::pg_catalog.regclass::pg_catalog.text);
		IF previous_default OPERATOR(pg_catalog.=) want_default THEN
			sequence := owned;
			action := 'unchanged';
			RETURN;
		END IF;
	END IF;
	IF pg_catalog.strpos(previous_default,
						 pg_catalog.quote_ident(ext_schema) OPERATOR(pg_catalog.||) '.shardid_next(')
	   OPERATOR(pg_catalog.=) 1 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = pg_catalog.format('column "%s" of relation %s already takes its IDs from shardid_next', col, tbl),
			DETAIL = pg_catalog.format('Its default is %s.', previous_default),
			HINT = 'An ID names the shard that holds it: moving a table to another shard is a shard move, not an adoption.';
	END IF;

	-- Existing keys must stay below every ID the new default can make:
	-- those have a time field at or after now.
	EXECUTE pg_catalog.format('SELECT max(%I) FROM %s', col, tbl) INTO max_id;
	first_id := @extschema@.shardid_encode(pg_catalog.clock_timestamp(), shard, 0);
	IF max_id OPERATOR(pg_catalog.>=) first_id THEN
		RAISE EXCEPTION USING
			ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = pg_catalog.format('column "%s" of relation %s holds values that new IDs could repeat', col, tbl),
			DETAIL = pg_catalog.format('Its largest value is %s; the first ID shard %s can make now is %s.',
									   max_id, shard, first_id),
			HINT = 'Adopt only keys from a counter; keys that already are shardid IDs need no adoption.';
	END IF;

	-- bigserial's sequence is kept.  An identity's goes with the identity,
	-- so a new sequence goes on where it stood; a column fed from a
	-- sequence it does not own, or from none, gets a new one of its own.
	action := 'adopted';
	IF owned IS NULL THEN
		IF identity_seq IS NOT NULL THEN
			SELECT s.last_value INTO restart
			  FROM pg_catalog.pg_sequences AS s
			 WHERE s.schemaname OPERATOR(pg_catalog.=) rel.nspname
			   AND s.sequencename OPERATOR(pg_catalog.=)
				   (SELECT c.relname FROM pg_catalog.pg_class AS c
					 WHERE c.oid OPERATOR(pg_catalog.=) identity_seq);
			EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
			action := 'adopted identity';
		ELSE
			action := 'adopted with a new sequence';
		END IF;

		-- a free name in the table's schema, <table>_<column>_seq as for
		-- bigserial, each part cut to 24 bytes (whole characters) so that
		-- the name fits NAMEDATALEN, and a number added while it is taken
		part := pg_catalog.left(rel.relname, 24);
		WHILE pg_catalog.octet_length(part) OPERATOR(pg_catalog.>) 24 LOOP
			part := pg_catalog.left(part, -1);
		END LOOP;
		seq_name := pg_catalog.left(col, 24);
		WHILE pg_catalog.octet_length(seq_name) OPERATOR(pg_catalog.>) 24 LOOP
			seq_name := pg_catalog.left(seq_name, -1);
		END LOOP;
		seq_name := part OPERATOR(pg_catalog.||) '_' OPERATOR(pg_catalog.||) seq_name
					OPERATOR(pg_catalog.||) '_seq';
		WHILE EXISTS (
			SELECT FROM pg_catalog.pg_class AS c
			  JOIN pg_catalog.pg_namespace AS ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
			 WHERE ns.nspname OPERATOR(pg_catalog.=) rel.nspname
			   AND c.relname OPERATOR(pg_catalog.=)
				   (seq_name OPERATOR(pg_catalog.||) CASE WHEN n OPERATOR(pg_catalog.>) 0
														  THEN n::pg_catalog.text ELSE '' END)) LOOP
			n := n OPERATOR(pg_catalog.+) 1;
		END LOOP;
		IF n OPERATOR(pg_catalog.>) 0 THEN
			seq_name := seq_name OPERATOR(pg_catalog.||) n::pg_catalog.text;
		END IF;
		EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS pg_catalog.int8 OWNED BY %s.%I',
								  rel.nspname, seq_name, tbl, col);
		owned := pg_catalog.format('%I.%I', rel.nspname, seq_name)::pg_catalog.regclass;
		IF restart IS NOT NULL THEN
			PERFORM pg_catalog.setval(owned::pg_catalog.regclass, restart);
		END IF;
		-- whoever may insert into the table may use its new sequence
		FOR grantee IN
			SELECT DISTINCT a.grantee
			  FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
			 WHERE c.oid OPERATOR(pg_catalog.=) tbl
			   AND a.privilege_type OPERATOR(pg_catalog.=) 'INSERT'
			   AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
		LOOP
			IF grantee.grantee OPERATOR(pg_catalog.=) 0 THEN
				EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE %s TO PUBLIC',
										  owned::pg_catalog.regclass);
			ELSE
				EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE %s TO %I',
										  owned::pg_catalog.regclass,
										  pg_catalog.pg_get_userbyid(grantee.grantee));
			END IF;
		END LOOP;
		want_default := pg_catalog.format('%I.shardid_next(%s, %L::regclass)',
										  ext_schema, shard, owned::pg_catalog.regclass::pg_catalog.text);
	END IF;

	EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s',
							  tbl, col, want_default);
	sequence := owned;
	RETURN;
END
$fn$;

COMMENT ON FUNCTION shardid_adopt(pg_catalog.regclass, pg_catalog.int4, pg_catalog.name) IS
'make an existing bigserial, nextval-fed or identity bigint column take its IDs from shardid_next on its own sequence';

--
-- Time partitions
--
-- A table partitioned BY RANGE (id) on a shardid key is partitioned by
-- time: the partition for [t1, t2) holds exactly the IDs from
-- shardid_floor(t1) up to, not including, shardid_floor(t2), on every
-- shard.  Maintenance keeps such tables partitioned ahead of the clock
-- (never of max(id), so a table that receives no rows has no gaps either),
-- gives rows that landed in the default partition partitions of their own
-- and moves them there, and drops whole partitions older than a retention
-- interval.
--
--   shardid_partition_run (a procedure) handles each parent in its own
--     transactions, so one parent's trouble stays with it and the locks
--     held at any time are one parent's;
--   shardid_partition_maintain_all / shardid_partition_maintain (functions)
--     do the same work inside the caller's transaction;
--   shardid_partition_status shows, per parent, how far ahead it is
--     covered, its default partition's rows and its last run.
--
-- Locks (docs/partitions.md has the table).  Every step locks in one
-- order, the order in which queries and inserts lock: the parent, then
-- its default partition, then a partition.  Each wait is bounded
-- (lock_timeout, set from the caller's lock_wait for the step); a step
-- that runs out of time is reported "busy", undone, and tried again by
-- the next run.
--   - making partitions: SHARE UPDATE EXCLUSIVE on the parent (it blocks
--     no query, insert, update or delete), then, when the parent has a
--     default partition and something is to be attached or moved, ACCESS
--     EXCLUSIVE on the default partition, as ATTACH PARTITION would take
--     it anyway;
--   - retention: ACCESS EXCLUSIVE on the parent, taken first, then DROP
--     TABLE of each partition past the cutoff (which locks the default
--     partition after the parent);
--   - both in one transaction (the functions): ACCESS EXCLUSIVE on the
--     parent first, if anything is to be dropped, so that the default
--     partition is never locked before the parent; if that wait runs out,
--     the drops are "busy" and the partitions are made as above.
-- No step holds the default partition while it waits for the parent,
-- which is how readers (the parent, then its partitions) and maintenance
-- deadlocked in 1.1.
--

-- The runs on each parent.  Maintenance appends a row per parent and
-- run, as the role that ran it; shardid_partition_status reads the last
-- one; shardid_partition_log_purge keeps only that one.
CREATE TABLE shardid_partition_log (
	parent		pg_catalog.oid NOT NULL,
	ran_at		pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	step		pg_catalog.interval NOT NULL,
	premake		pg_catalog.int4 NOT NULL,
	retain		pg_catalog.interval,
	epoch		pg_catalog.timestamptz NOT NULL,
	result		pg_catalog.text NOT NULL
		CHECK (result OPERATOR(pg_catalog.=) ANY ('{ok,busy,failed}'::pg_catalog.text[])),
	sqlstate	pg_catalog.text,
	message		pg_catalog.text,
	made		pg_catalog.int4 NOT NULL,
	dropped		pg_catalog.int4 NOT NULL,
	moved		pg_catalog.int8 NOT NULL,
	pruned		pg_catalog.int8 NOT NULL
);

CREATE INDEX shardid_partition_log_parent ON shardid_partition_log (parent, ran_at);

COMMENT ON TABLE shardid_partition_log IS
'partition maintenance runs, a row per table and run; read the last through shardid_partition_status';

-- Any role may add the runs of tables it owns (is a member of the owning
-- role of), and read them; members of pg_monitor read all.  No role but
-- the extension's owner may change or delete a row, or lock the table
-- against others: INSERT and SELECT allow only the weak lock modes.
REVOKE ALL ON TABLE shardid_partition_log FROM PUBLIC;
GRANT SELECT, INSERT ON TABLE shardid_partition_log TO PUBLIC;
ALTER TABLE shardid_partition_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY shardid_partition_log_read ON shardid_partition_log FOR SELECT
	USING (pg_catalog.pg_has_role('pg_monitor', 'USAGE')
		   OR EXISTS (SELECT FROM pg_catalog.pg_class AS c
					   WHERE c.oid OPERATOR(pg_catalog.=) parent
						 AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));
CREATE POLICY shardid_partition_log_add ON shardid_partition_log FOR INSERT
	WITH CHECK (EXISTS (SELECT FROM pg_catalog.pg_class AS c
						 WHERE c.oid OPERATOR(pg_catalog.=) parent
						   AND c.relkind OPERATOR(pg_catalog.=) 'p'
						   AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));

-- Keep only the last run of each table that is still there.  SECURITY
-- DEFINER, as only the extension's owner may delete; what it deletes no
-- one reads, so any role may call it.  It never waits: a row another
-- transaction holds stays for the next purge.
CREATE FUNCTION shardid_partition_log_purge()
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	n pg_catalog.int8;
BEGIN
	DELETE FROM @extschema@.shardid_partition_log AS l
	 WHERE l.ctid OPERATOR(pg_catalog.=) ANY (ARRAY(
		SELECT o.ctid
		  FROM @extschema@.shardid_partition_log AS o
		 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
							WHERE c.oid OPERATOR(pg_catalog.=) o.parent
							  AND c.relkind OPERATOR(pg_catalog.=) 'p')
			OR EXISTS (SELECT FROM @extschema@.shardid_partition_log AS later
						WHERE later.parent OPERATOR(pg_catalog.=) o.parent
						  AND later.ran_at OPERATOR(pg_catalog.>) o.ran_at)
		   FOR UPDATE SKIP LOCKED));
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_log_purge() IS
'internal: forget all but the last partition maintenance run of each table';

-- The range partitions of a parent, with their bounds as numerics
-- (MINVALUE and MAXVALUE one past the int8 range).  The default partition
-- and partitions of other strategies are not listed.
CREATE FUNCTION shardid_partition_ranges(
	parent pg_catalog.regclass,
	OUT partition pg_catalog.oid,
	OUT nspname pg_catalog.name,
	OUT relname pg_catalog.name,
	OUT lo pg_catalog.numeric,
	OUT hi pg_catalog.numeric)
RETURNS SETOF pg_catalog.record
LANGUAGE sql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT pc.oid, pn.nspname, pc.relname,
		   CASE m[1] WHEN 'MINVALUE' THEN -9223372036854775809
				ELSE pg_catalog.btrim(m[1], '''')::pg_catalog.numeric END,
		   CASE m[2] WHEN 'MAXVALUE' THEN 9223372036854775808
				ELSE pg_catalog.btrim(m[2], '''')::pg_catalog.numeric END
	  FROM pg_catalog.pg_inherits AS h
	  JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) h.inhrelid
	  JOIN pg_catalog.pg_namespace AS pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace,
		   pg_catalog.regexp_match(pg_catalog.pg_get_expr(pc.relpartbound, pc.oid),
								   '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
	 WHERE h.inhparent OPERATOR(pg_catalog.=) parent
	   AND m IS NOT NULL
$fn$;

COMMENT ON FUNCTION shardid_partition_ranges(pg_catalog.regclass) IS
'internal: the range partitions of a table, with their bounds';

-- The start of the step that holds t, in UTC: steps of months from
-- January of year 0, other steps from Monday 2001-01-01.
CREATE FUNCTION shardid_partition_step_start(t pg_catalog.timestamptz, step pg_catalog.interval)
RETURNS pg_catalog.timestamptz
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
	SELECT CASE WHEN s.months OPERATOR(pg_catalog.=) 0
				THEN pg_catalog.date_bin(step, t, '2001-01-01 00:00:00+00')
				ELSE pg_catalog.make_timestamptz(s.k OPERATOR(pg_catalog./) 12,
												 (s.k OPERATOR(pg_catalog.%) 12) OPERATOR(pg_catalog.+) 1,
												 1, 0, 0, 0, 'UTC') END
	  FROM (SELECT m.months,
				   m.k0 OPERATOR(pg_catalog.-) (m.k0 OPERATOR(pg_catalog.%) NULLIF(m.months, 0)) AS k
			  FROM (SELECT ((EXTRACT(year FROM step) OPERATOR(pg_catalog.*) 12)
							OPERATOR(pg_catalog.+) EXTRACT(month FROM step))::pg_catalog.int4 AS months,
						   (((EXTRACT(year FROM t) OPERATOR(pg_catalog.*) 12)
							 OPERATOR(pg_catalog.+) EXTRACT(month FROM t))
							OPERATOR(pg_catalog.-) 1)::pg_catalog.int4 AS k0) AS m) AS s
$fn$;

COMMENT ON FUNCTION shardid_partition_step_start(pg_catalog.timestamptz, pg_catalog.interval) IS
'internal: the start of the partition step that holds a time';

-- The work on one parent, in the caller's transaction: make its partitions
-- (do_make), drop those past retention (do_drop), or, with a NULL parent, only
-- check the arguments.  One row per partition looked at; a step whose
-- lock wait ran out gives one row "busy" and is undone.
CREATE FUNCTION shardid_partition_work(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	lock_wait pg_catalog.interval,
	do_make pg_catalog.bool,
	do_drop pg_catalog.bool,
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT range_start pg_catalog.timestamptz,
	OUT range_end pg_catalog.timestamptz,
	OUT moved pg_catalog.int8)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	-- the step, taken apart
	step_months pg_catalog.numeric;
	step_days pg_catalog.numeric;
	step_us pg_catalog.numeric;
	step_ms pg_catalog.int8;
	suffix_format pg_catalog.text;
	horizon pg_catalog.timestamptz;
	cutoff pg_catalog.int8;
	-- the partitions this parent should have: [starts[i], ends[i])
	starts pg_catalog.timestamptz[] := '{}';
	t pg_catalog.timestamptz;
	i pg_catalog.int4;
	-- the parent
	par record;
	def record;
	keyname pg_catalog.name;
	cols pg_catalog.text;
	default_btree_int8 pg_catalog.oid;
	space_clause pg_catalog.text;
	base_name pg_catalog.text;
	due pg_catalog.bool;
	drops_due pg_catalog.bool;
	drops_busy pg_catalog.bool;
	me pg_catalog.oid;
	n_found pg_catalog.int4 := 0;
	lock_ms pg_catalog.int8;
	-- one partition
	rng record;
	cover record;
	gone record;
	lo_id pg_catalog.int8;
	hi_id pg_catalog.int8;
	lo_min pg_catalog.int8;
	v pg_catalog.int8;
	new_name pg_catalog.text;
	n_rows pg_catalog.int8;
	-- what the make step did, returned once it has stood
	r_part pg_catalog.text[] := '{}';
	r_action pg_catalog.text[] := '{}';
	r_start pg_catalog.timestamptz[] := '{}';
	r_end pg_catalog.timestamptz[] := '{}';
	r_moved pg_catalog.int8[] := '{}';
BEGIN
	IF step IS NULL OR premake IS NULL OR epoch IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent tables, step, premake and epoch must not be null',
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;

	-- The epoch: shardid_horizon() refuses one that is infinite, not a
	-- whole millisecond or out of range.
	horizon := @extschema@.shardid_horizon(epoch);
	IF pg_catalog.now() OPERATOR(pg_catalog.<) epoch THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('epoch %s is in the future', epoch),
			DETAIL = 'Partitions are made from the current time on, and IDs count milliseconds since the epoch.';
	END IF;

	-- The step: a whole number of milliseconds that divides a day, one
	-- week, or a number of months that divides a year or is whole years.
	-- Partitions then start on the same UTC boundaries on every run.
	-- (OPERATOR() has one precedence for all operators: parenthesise.)
	step_months := (EXTRACT(year FROM step) OPERATOR(pg_catalog.*) 12)
				   OPERATOR(pg_catalog.+) EXTRACT(month FROM step);
	step_days := EXTRACT(day FROM step);
	step_us := (EXTRACT(hour FROM step) OPERATOR(pg_catalog.*) 3600000000)
			   OPERATOR(pg_catalog.+) (EXTRACT(minute FROM step) OPERATOR(pg_catalog.*) 60000000)
			   OPERATOR(pg_catalog.+) EXTRACT(microseconds FROM step);
	IF step OPERATOR(pg_catalog.<=) '0'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('partition step "%s" is not positive', step);
	END IF;
	IF step_months OPERATOR(pg_catalog.=) 0 THEN
		step_us := (step_days OPERATOR(pg_catalog.*) 86400000000) OPERATOR(pg_catalog.+) step_us;
		IF (step_us OPERATOR(pg_catalog.%) 1000) OPERATOR(pg_catalog.<>) 0 THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_parameter_value',
				MESSAGE = pg_catalog.format('partition step "%s" is not a whole number of milliseconds', step),
				DETAIL = 'Partition bounds are shardid_floor() values, which count whole milliseconds.';
		END IF;
		step_ms := (step_us OPERATOR(pg_catalog./) 1000)::pg_catalog.int8;
		IF (86400000 OPERATOR(pg_catalog.%) step_ms) OPERATOR(pg_catalog.<>) 0
		   AND step_ms OPERATOR(pg_catalog.<>) 604800000 THEN
			step_ms := NULL;
		END IF;
	ELSIF step_months OPERATOR(pg_catalog.>) 0 AND step_days OPERATOR(pg_catalog.=) 0
		  AND step_us OPERATOR(pg_catalog.=) 0
		  AND ((12 OPERATOR(pg_catalog.%) step_months) OPERATOR(pg_catalog.=) 0
			   OR (step_months OPERATOR(pg_catalog.%) 12) OPERATOR(pg_catalog.=) 0) THEN
		step_ms := 0;			-- months: no fixed length
	END IF;
	IF step_ms IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('partition step "%s" does not divide evenly into days or years', step),
			DETAIL = 'A step is a whole number of milliseconds that divides a day (such as 1 hour or 15 minutes), 1 day, 1 week, a number of months that divides a year (1, 2, 3, 4 or 6), or whole years.',
			HINT = 'Partitions start on UTC boundaries of the step: midnight for days, Monday for weeks, January for years.';
	END IF;

	IF premake OPERATOR(pg_catalog.<) 0 OR premake OPERATOR(pg_catalog.>) 1000 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'numeric_value_out_of_range',
			MESSAGE = pg_catalog.format('premake %s is out of range', premake),
			DETAIL = 'premake is the number of partitions to make after the current one, 0 to 1000.';
	END IF;
	IF retain OPERATOR(pg_catalog.<=) '0'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('retention interval "%s" is not positive', retain),
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;
	IF lock_wait OPERATOR(pg_catalog.<=) '0'::pg_catalog.interval
	   OR lock_wait OPERATOR(pg_catalog.>) '1 day'::pg_catalog.interval THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('lock wait "%s" is out of range', lock_wait),
			DETAIL = 'lock_wait bounds each lock wait of a maintenance step: more than 0, at most 1 day.';
	END IF;

	-- The partitions wanted: the one holding now(), and premake after it.
	IF step_ms OPERATOR(pg_catalog.=) 0 THEN
		suffix_format := 'YYYYMM';
	ELSE
		suffix_format := CASE
			WHEN (step_ms OPERATOR(pg_catalog.%) 86400000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD'
			WHEN (step_ms OPERATOR(pg_catalog.%) 3600000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24'
			WHEN (step_ms OPERATOR(pg_catalog.%) 60000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MI'
			WHEN (step_ms OPERATOR(pg_catalog.%) 1000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MISS'
			ELSE 'YYYYMMDD_HH24MISSMS' END;
	END IF;
	t := pg_catalog.now();
	FOR i IN 0 .. premake LOOP
		t := @extschema@.shardid_partition_step_start(t, step);
		starts := starts OPERATOR(pg_catalog.||) t;
		t := t OPERATOR(pg_catalog.+) step;
		IF t OPERATOR(pg_catalog.>) horizon THEN
			RAISE EXCEPTION USING
				ERRCODE = 'datetime_field_overflow',
				MESSAGE = pg_catalog.format('partition bound %s is past the horizon of the epoch', t),
				DETAIL = pg_catalog.format('With the epoch %s, the last millisecond that encodes to a positive bigint is %s.',
										   epoch, horizon),
				HINT = 'Make fewer partitions ahead, or use a later epoch for new tables.';
		END IF;
	END LOOP;
	IF retain IS NOT NULL AND (pg_catalog.now() OPERATOR(pg_catalog.-) retain) OPERATOR(pg_catalog.>) epoch THEN
		cutoff := @extschema@.shardid_floor(pg_catalog.now() OPERATOR(pg_catalog.-) retain, epoch);
	END IF;

	IF parent IS NULL THEN
		RETURN;					-- the arguments are fine
	END IF;

	-- The parent: a table partitioned by range on one bigint column with
	-- the built-in operator class, owned by the caller.
	SELECT c.oid, c.oid::pg_catalog.regclass AS rel, c.relkind, c.relowner,
		   n.oid AS nspoid, n.nspname, c.relname, s.spcname
	  INTO par
	  FROM pg_catalog.pg_class AS c
	  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
	  LEFT JOIN pg_catalog.pg_tablespace AS s ON s.oid OPERATOR(pg_catalog.=) c.reltablespace
	 WHERE c.oid OPERATOR(pg_catalog.=) parent::pg_catalog.oid;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'undefined_table',
			MESSAGE = pg_catalog.format('relation with OID %s does not exist', parent::pg_catalog.oid);
	END IF;
	IF par.relkind OPERATOR(pg_catalog.<>) 'p' THEN
		RAISE EXCEPTION USING
			ERRCODE = 'wrong_object_type',
			MESSAGE = pg_catalog.format('relation %s is not a partitioned table', par.rel),
			HINT = 'Create the table with PARTITION BY RANGE (id).';
	END IF;
	me := (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) current_user);
	IF NOT pg_catalog.pg_has_role(par.relowner, 'USAGE') THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('must be owner of table %s', par.rel),
			DETAIL = 'Only the owner of a partitioned table may maintain its partitions.';
	END IF;
	SELECT o.oid INTO default_btree_int8
	  FROM pg_catalog.pg_opclass AS o
	  JOIN pg_catalog.pg_am AS a ON a.oid OPERATOR(pg_catalog.=) o.opcmethod
	 WHERE a.amname OPERATOR(pg_catalog.=) 'btree'
	   AND o.opcintype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
	   AND o.opcdefault;
	SELECT a.attname INTO keyname
	  FROM pg_catalog.pg_partitioned_table AS pt
	  JOIN pg_catalog.pg_attribute AS a
		ON a.attrelid OPERATOR(pg_catalog.=) pt.partrelid
	   AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
	 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid
	   AND pt.partstrat OPERATOR(pg_catalog.=) 'r'
	   AND pt.partnatts OPERATOR(pg_catalog.=) 1
	   AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
	   AND pt.partclass[0] OPERATOR(pg_catalog.=) default_btree_int8;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_table_definition',
			MESSAGE = pg_catalog.format('table %s is not partitioned by range on one bigint column', par.rel),
			DETAIL = pg_catalog.format('Its partition key is %s.', pg_catalog.pg_get_partkeydef(par.oid)),
			HINT = 'Partition a table on shardid keys with PARTITION BY RANGE (id), where id is a bigint column.';
	END IF;

	-- Every lock wait from here on is bounded (the setting ends with this
	-- function: it has SET clauses of its own).
	IF lock_wait IS NOT NULL THEN
		lock_ms := GREATEST(CEIL(EXTRACT(epoch FROM lock_wait) OPERATOR(pg_catalog.*) 1000), 1)::pg_catalog.int8;
		PERFORM pg_catalog.set_config('lock_timeout', lock_ms::pg_catalog.text, true);
	END IF;

	-- The parent first.  With partitions to drop, ACCESS EXCLUSIVE at
	-- once, before the default partition is touched; if that wait runs
	-- out, the drops are "busy" and the partitions are made all the same,
	-- under SHARE UPDATE EXCLUSIVE, which serialises maintenance runs and
	-- blocks no query or insert.
	drops_due := do_drop AND cutoff IS NOT NULL
		   AND EXISTS (SELECT FROM @extschema@.shardid_partition_ranges(par.oid) AS b
						WHERE b.hi OPERATOR(pg_catalog.<=) cutoff::pg_catalog.numeric);
	IF NOT do_make AND NOT do_drop THEN
		RETURN;
	END IF;
	drops_busy := false;
	IF drops_due THEN
		BEGIN
			EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN ACCESS EXCLUSIVE MODE',
									  par.nspname, par.relname);
		EXCEPTION WHEN lock_not_available THEN
			drops_busy := true;
		END;
	END IF;
	IF do_make AND (drops_busy OR NOT drops_due) THEN
		BEGIN
			EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN SHARE UPDATE EXCLUSIVE MODE',
									  par.nspname, par.relname);
		EXCEPTION WHEN lock_not_available THEN
			partition := pg_catalog.format('%I.%I', par.nspname, par.relname);
			action := 'busy';
			moved := 0;
			RETURN NEXT;
			RETURN;
		END;
	END IF;

	SELECT dc.oid, dn.nspname, dc.relname INTO def
	  FROM pg_catalog.pg_partitioned_table AS pt
	  JOIN pg_catalog.pg_class AS dc ON dc.oid OPERATOR(pg_catalog.=) pt.partdefid
	  JOIN pg_catalog.pg_namespace AS dn ON dn.oid OPERATOR(pg_catalog.=) dc.relnamespace
	 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid;

	IF do_make THEN
		space_clause := CASE WHEN par.spcname IS NULL THEN ''
						ELSE pg_catalog.format(' TABLESPACE %I', par.spcname) END;
		-- Partition names are the table's name and the suffix, the table's
		-- name cut short to fit NAMEDATALEN.
		base_name := par.relname;
		WHILE (pg_catalog.octet_length(base_name) OPERATOR(pg_catalog.+)
			   pg_catalog.octet_length('_p' OPERATOR(pg_catalog.||) pg_catalog.to_char(starts[1], suffix_format)))
			  OPERATOR(pg_catalog.>) 63 LOOP
			base_name := pg_catalog.left(base_name, -1);
		END LOOP;
		-- the parent's columns that can be written, for moving rows
		SELECT pg_catalog.string_agg(pg_catalog.format('%I', a.attname), ', ' ORDER BY a.attnum) INTO cols
		  FROM pg_catalog.pg_attribute AS a
		 WHERE a.attrelid OPERATOR(pg_catalog.=) par.oid
		   AND a.attnum OPERATOR(pg_catalog.>) 0
		   AND NOT a.attisdropped
		   AND a.attgenerated OPERATOR(pg_catalog.=) '';
		-- rows older than the retention cutoff are not given partitions
		lo_min := COALESCE(cutoff, 0);

		BEGIN
			-- The default partition, after the parent: when it holds rows
			-- from the cutoff on, or a wanted partition is missing (ATTACH
			-- would lock it anyway).  Nothing can reach it meanwhile.
			IF def.oid IS NOT NULL THEN
				EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1)',
										  def.nspname, def.relname, keyname)
				   INTO due USING lo_min;
				IF due OR EXISTS (
					SELECT FROM (SELECT @extschema@.shardid_floor(GREATEST(w.s, epoch), epoch)::pg_catalog.numeric AS lo,
										@extschema@.shardid_floor(w.s OPERATOR(pg_catalog.+) step, epoch)::pg_catalog.numeric AS hi
								   FROM pg_catalog.unnest(starts) AS w(s)) AS x
					 WHERE (SELECT COALESCE(pg_catalog.sum(LEAST(b.hi, x.hi) OPERATOR(pg_catalog.-) GREATEST(b.lo, x.lo)), 0)
							  FROM @extschema@.shardid_partition_ranges(par.oid) AS b
							 WHERE b.lo OPERATOR(pg_catalog.<) x.hi AND b.hi OPERATOR(pg_catalog.>) x.lo)
						   OPERATOR(pg_catalog.<) (x.hi OPERATOR(pg_catalog.-) x.lo)) THEN
					EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN ACCESS EXCLUSIVE MODE',
											  def.nspname, def.relname);
				END IF;
				-- The steps that hold its rows, from the cutoff up to the
				-- horizon, one index probe each (rows past the horizon
				-- can have no partition).
				IF due THEN
					v := lo_min;
					LOOP
						EXECUTE pg_catalog.format('SELECT pg_catalog.min(d.%I) FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1',
												  keyname, def.nspname, def.relname, keyname)
						   INTO v USING v;
						EXIT WHEN v IS NULL OR v OPERATOR(pg_catalog.<) 0;
						t := @extschema@.shardid_created_at(v, epoch);
						t := @extschema@.shardid_partition_step_start(t, step);
						EXIT WHEN (t OPERATOR(pg_catalog.+) step) OPERATOR(pg_catalog.>) horizon;
						IF pg_catalog.array_position(starts, t) IS NULL THEN
							starts := starts OPERATOR(pg_catalog.||) t;
							-- at most 100 such partitions a run (a role
							-- that may only insert could otherwise make a
							-- run make thousands, and fill the lock table);
							-- the next run makes more
							n_found := n_found OPERATOR(pg_catalog.+) 1;
							EXIT WHEN n_found OPERATOR(pg_catalog.>=) 100;
						END IF;
						v := @extschema@.shardid_floor(t OPERATOR(pg_catalog.+) step, epoch);
					END LOOP;
				END IF;
			END IF;

			FOR rng IN
				SELECT w.s AS range_start, w.s OPERATOR(pg_catalog.+) step AS range_end
				  FROM pg_catalog.unnest(starts) AS w(s)
				 ORDER BY w.s
			LOOP
				-- a partition that starts before the epoch starts at ID 0
				lo_id := @extschema@.shardid_floor(GREATEST(rng.range_start, epoch), epoch);
				hi_id := @extschema@.shardid_floor(rng.range_end, epoch);
				new_name := base_name OPERATOR(pg_catalog.||) '_p'
							OPERATOR(pg_catalog.||) pg_catalog.to_char(rng.range_start, suffix_format);

				-- What covers this range already?
				SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', b.nspname, b.relname), ', '
											 ORDER BY b.lo) AS names,
					   pg_catalog.sum(LEAST(b.hi, hi_id::pg_catalog.numeric)
									  OPERATOR(pg_catalog.-) GREATEST(b.lo, lo_id::pg_catalog.numeric)) AS covered,
					   pg_catalog.bool_or(b.lo OPERATOR(pg_catalog.=) lo_id AND b.hi OPERATOR(pg_catalog.=) hi_id) AS same
				  INTO cover
				  FROM @extschema@.shardid_partition_ranges(par.oid) AS b
				 WHERE b.lo OPERATOR(pg_catalog.<) hi_id::pg_catalog.numeric
				   AND b.hi OPERATOR(pg_catalog.>) lo_id::pg_catalog.numeric;

				IF cover.same OR cover.covered OPERATOR(pg_catalog.=)
								 (hi_id::pg_catalog.numeric OPERATOR(pg_catalog.-) lo_id::pg_catalog.numeric) THEN
					r_part := r_part OPERATOR(pg_catalog.||) cover.names;
					r_action := r_action OPERATOR(pg_catalog.||)
								CASE WHEN cover.same THEN 'exists' ELSE 'covered' END;
					r_start := r_start OPERATOR(pg_catalog.||) GREATEST(rng.range_start, epoch);
					r_end := r_end OPERATOR(pg_catalog.||) rng.range_end;
					r_moved := r_moved OPERATOR(pg_catalog.||) 0::pg_catalog.int8;
					CONTINUE;
				ELSIF cover.covered IS NOT NULL THEN
					RAISE EXCEPTION USING
						ERRCODE = 'invalid_object_definition',
						MESSAGE = pg_catalog.format('new partition %I.%I of table %s would overlap partition %s',
													par.nspname, new_name, par.rel, cover.names),
						DETAIL = pg_catalog.format('The new partition would hold IDs from %s (%s) to %s (%s); the existing partitions cover part of that range.',
												   lo_id, GREATEST(rng.range_start, epoch), hi_id, rng.range_end),
						HINT = 'Maintain the table with the step its partitions were made with.';
				END IF;

				-- Never adopt a table that is there already.
				IF EXISTS (SELECT FROM pg_catalog.pg_class AS c
							WHERE c.relnamespace OPERATOR(pg_catalog.=) par.nspoid
							  AND c.relname OPERATOR(pg_catalog.=) new_name) THEN
					RAISE EXCEPTION USING
						ERRCODE = 'duplicate_table',
						MESSAGE = pg_catalog.format('relation %I.%I already exists', par.nspname, new_name),
						DETAIL = pg_catalog.format('It is not a partition of table %s for %s to %s.',
												   par.rel, GREATEST(rng.range_start, epoch), rng.range_end),
						HINT = 'Rename or drop it: maintenance does not adopt existing tables.';
				END IF;

				-- A table of its own, then attached: ATTACH PARTITION needs
				-- only SHARE UPDATE EXCLUSIVE on the parent, where CREATE
				-- TABLE ... PARTITION OF would take ACCESS EXCLUSIVE.
				EXECUTE pg_catalog.format(
					'CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS'
					' INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)%s',
					par.nspname, new_name, par.nspname, par.relname, space_clause);
				-- the parent's owner owns its partitions, whichever member
				-- of that role ran the maintenance
				IF par.relowner OPERATOR(pg_catalog.<>) me THEN
					EXECUTE pg_catalog.format('ALTER TABLE %I.%I OWNER TO %I', par.nspname, new_name,
											  pg_catalog.pg_get_userbyid(par.relowner));
				END IF;

				-- Rows of this range in the default partition move into the
				-- new table, in this transaction, under the lock taken
				-- above: none can arrive meanwhile, none is lost.
				n_rows := 0;
				IF def.oid IS NOT NULL THEN
					EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1 AND d.%I OPERATOR(pg_catalog.<) $2)',
											  def.nspname, def.relname, keyname, keyname)
					   INTO due USING lo_id, hi_id;
					IF due THEN
						-- A foreign key to the parent would see the rows
						-- leave (ON DELETE CASCADE would act on it).
						IF EXISTS (SELECT FROM pg_catalog.pg_constraint AS fk
									WHERE fk.contype OPERATOR(pg_catalog.=) 'f'
									  AND (fk.confrelid OPERATOR(pg_catalog.=) par.oid
										   OR fk.confrelid OPERATOR(pg_catalog.=) def.oid)) THEN
							RAISE EXCEPTION USING
								ERRCODE = 'feature_not_supported',
								MESSAGE = pg_catalog.format('cannot move rows of default partition %I.%I: table %s is referenced by a foreign key',
															def.nspname, def.relname, par.rel),
								DETAIL = pg_catalog.format('The rows with IDs from %s (%s) up to %s (%s) would be deleted and inserted again, which the foreign key''s ON DELETE action would see.',
														   lo_id, GREATEST(rng.range_start, epoch), hi_id, rng.range_end),
								HINT = 'Move them yourself (docs/partitions.md, "Rows in the default partition"), then run the maintenance again.';
						END IF;
						-- Moving rows runs the table's triggers and CHECK
						-- constraints: only as the table's owner.
						IF par.relowner OPERATOR(pg_catalog.<>) me THEN
							RAISE EXCEPTION USING
								ERRCODE = 'insufficient_privilege',
								MESSAGE = pg_catalog.format('must be owner of table %s to move rows out of its default partition', par.rel),
								DETAIL = 'Moving rows runs the table''s triggers and constraints, which would run as the caller.',
								HINT = pg_catalog.format('Run the maintenance as role %s (SET ROLE).', par.relowner::pg_catalog.regrole);
						END IF;
						EXECUTE pg_catalog.format(
							'WITH d AS (DELETE FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1 AND d.%I OPERATOR(pg_catalog.<) $2 RETURNING %s)'
							' INSERT INTO %I.%I (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM d',
							def.nspname, def.relname, keyname, keyname, cols,
							par.nspname, new_name, cols, cols)
						USING lo_id, hi_id;
						GET DIAGNOSTICS n_rows = ROW_COUNT;
						RAISE NOTICE USING
							MESSAGE = pg_catalog.format('moved %s rows from default partition %I.%I into new partition %I.%I',
														n_rows, def.nspname, def.relname, par.nspname, new_name);
					END IF;
				END IF;

				EXECUTE pg_catalog.format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
										  par.nspname, par.relname, par.nspname, new_name, lo_id, hi_id);
				r_part := r_part OPERATOR(pg_catalog.||) pg_catalog.format('%I.%I', par.nspname, new_name);
				r_action := r_action OPERATOR(pg_catalog.||) 'created'::pg_catalog.text;
				r_start := r_start OPERATOR(pg_catalog.||) GREATEST(rng.range_start, epoch);
				r_end := r_end OPERATOR(pg_catalog.||) rng.range_end;
				r_moved := r_moved OPERATOR(pg_catalog.||) n_rows;
			END LOOP;
		EXCEPTION WHEN lock_not_available THEN
			-- undone; the next run makes them
			partition := pg_catalog.format('%I.%I', par.nspname, par.relname);
			action := 'busy';
			range_start := NULL;
			range_end := NULL;
			moved := 0;
			RETURN NEXT;
			r_part := '{}';
		END;
		FOR i IN 1 .. pg_catalog.cardinality(r_part) LOOP
			partition := r_part[i];
			action := r_action[i];
			range_start := r_start[i];
			range_end := r_end[i];
			moved := r_moved[i];
			RETURN NEXT;
		END LOOP;
	END IF;

	IF NOT do_drop OR cutoff IS NULL THEN
		RETURN;
	END IF;

	-- Retention in the default partition: its rows older than the cutoff
	-- are deleted, as they would have gone with their partition (after
	-- the parent, when partitions are to be dropped too).  As for moves:
	-- not through a foreign key, and only as the table's owner.
	IF def.oid IS NOT NULL THEN
		BEGIN
			EXECUTE pg_catalog.format('SELECT EXISTS (SELECT FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.<) $1)',
									  def.nspname, def.relname, keyname)
			   INTO due USING cutoff;
			IF due THEN
				IF EXISTS (SELECT FROM pg_catalog.pg_constraint AS fk
							WHERE fk.contype OPERATOR(pg_catalog.=) 'f'
							  AND (fk.confrelid OPERATOR(pg_catalog.=) par.oid
								   OR fk.confrelid OPERATOR(pg_catalog.=) def.oid)) THEN
					RAISE EXCEPTION USING
						ERRCODE = 'feature_not_supported',
						MESSAGE = pg_catalog.format('cannot delete rows older than the retention from default partition %I.%I: table %s is referenced by a foreign key',
													def.nspname, def.relname, par.rel),
						DETAIL = pg_catalog.format('Its rows with IDs below %s (%s) are past the retention.',
												   cutoff, pg_catalog.now() OPERATOR(pg_catalog.-) retain),
						HINT = 'Delete them yourself, then run the maintenance again.';
				END IF;
				IF par.relowner OPERATOR(pg_catalog.<>) me THEN
					RAISE EXCEPTION USING
						ERRCODE = 'insufficient_privilege',
						MESSAGE = pg_catalog.format('must be owner of table %s to delete rows from its default partition', par.rel),
						DETAIL = 'Deleting rows runs the table''s triggers, which would run as the caller.',
						HINT = pg_catalog.format('Run the maintenance as role %s (SET ROLE).', par.relowner::pg_catalog.regrole);
				END IF;
				EXECUTE pg_catalog.format('DELETE FROM ONLY %I.%I AS d WHERE d.%I OPERATOR(pg_catalog.<) $1',
										  def.nspname, def.relname, keyname)
				   USING cutoff;
				GET DIAGNOSTICS n_rows = ROW_COUNT;
				partition := pg_catalog.format('%I.%I', def.nspname, def.relname);
				action := 'pruned';
				range_start := NULL;
				range_end := pg_catalog.now() OPERATOR(pg_catalog.-) retain;
				moved := n_rows;
				RETURN NEXT;
			END IF;
		EXCEPTION WHEN lock_not_available THEN
			partition := pg_catalog.format('%I.%I', def.nspname, def.relname);
			action := 'busy';
			range_start := NULL;
			range_end := NULL;
			moved := 0;
			RETURN NEXT;
			RETURN;
		END;
	END IF;

	-- (partitions that came due since the parent was locked wait for the
	-- next run: dropping them now would lock the parent after the default)
	IF NOT drops_due THEN
		RETURN;
	END IF;

	-- Retention: the parent is held ACCESS EXCLUSIVE already (taken first,
	-- above), or could not be, and every drop is "busy"; DROP TABLE locks
	-- the default partition after it.  A drop whose lock wait runs out is
	-- "busy", and the rest wait for the next run.
	FOR gone IN
		SELECT b.nspname, b.relname, b.lo, b.hi
		  FROM @extschema@.shardid_partition_ranges(par.oid) AS b
		 WHERE b.hi OPERATOR(pg_catalog.<=) cutoff::pg_catalog.numeric
		 ORDER BY b.hi
	LOOP
		partition := pg_catalog.format('%I.%I', gone.nspname, gone.relname);
		range_start := CASE WHEN gone.lo OPERATOR(pg_catalog.>=) 0
						   THEN @extschema@.shardid_created_at(gone.lo::pg_catalog.int8, epoch) END;
		range_end := CASE WHEN gone.hi OPERATOR(pg_catalog.>=) 0
						 THEN @extschema@.shardid_created_at(gone.hi::pg_catalog.int8, epoch) END;
		moved := 0;
		IF drops_busy THEN
			action := 'busy';
			RETURN NEXT;
			CONTINUE;
		END IF;
		BEGIN
			EXECUTE pg_catalog.format('DROP TABLE %I.%I', gone.nspname, gone.relname);
			action := 'dropped';
		EXCEPTION WHEN lock_not_available THEN
			action := 'busy';
			RETURN NEXT;
			EXIT;
		END;
		RETURN NEXT;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_work(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
										   pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval,
										   pg_catalog.bool, pg_catalog.bool) IS
'internal: the partition maintenance of one table, in the caller''s transaction';

CREATE FUNCTION shardid_partition_maintain_all(
	parents pg_catalog.regclass[],
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval DEFAULT NULL,
	epoch pg_catalog.timestamptz DEFAULT '2011-01-01 00:00:00+00',
	OUT parent pg_catalog.regclass,
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT range_start pg_catalog.timestamptz,
	OUT range_end pg_catalog.timestamptz)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $fn$
DECLARE
	lock_wait pg_catalog.interval;
	par record;
	w record;
	n_made pg_catalog.int4;
	n_dropped pg_catalog.int4;
	n_moved pg_catalog.int8;
	n_pruned pg_catalog.int8;
	n_busy pg_catalog.int4;
BEGIN
	IF parents IS NULL OR pg_catalog.array_position(parents, NULL) IS NOT NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent table must not be null';
	END IF;
	-- the session's lock_timeout, else one second
	lock_wait := CASE pg_catalog.current_setting('lock_timeout')
				 WHEN '0' THEN '1 s'::pg_catalog.interval
				 ELSE pg_catalog.current_setting('lock_timeout')::pg_catalog.interval END;
	-- the arguments, before any parent
	PERFORM FROM @extschema@.shardid_partition_work(NULL, step, premake, retain, epoch, lock_wait,
													   false, false);

	-- One parent after another, in name order, so that concurrent runs
	-- lock their parents in the same order.
	FOR par IN
		SELECT DISTINCT u.rel::pg_catalog.oid AS oid, n.nspname, c.relname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  LEFT JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		 ORDER BY n.nspname, c.relname, 1
	LOOP
		parent := par.oid::pg_catalog.regclass;
		n_made := 0;
		n_dropped := 0;
		n_moved := 0;
		n_pruned := 0;
		n_busy := 0;
		FOR w IN
			SELECT * FROM @extschema@.shardid_partition_work(parent, step, premake, retain, epoch,
															 lock_wait, true, true)
		LOOP
			partition := w.partition;
			action := w.action;
			range_start := w.range_start;
			range_end := w.range_end;
			n_made := n_made OPERATOR(pg_catalog.+) (w.action OPERATOR(pg_catalog.=) 'created')::pg_catalog.int4;
			n_dropped := n_dropped OPERATOR(pg_catalog.+) (w.action OPERATOR(pg_catalog.=) 'dropped')::pg_catalog.int4;
			n_busy := n_busy OPERATOR(pg_catalog.+) (w.action OPERATOR(pg_catalog.=) 'busy')::pg_catalog.int4;
			IF w.action OPERATOR(pg_catalog.=) 'pruned' THEN
				n_pruned := n_pruned OPERATOR(pg_catalog.+) w.moved;
			ELSE
				n_moved := n_moved OPERATOR(pg_catalog.+) w.moved;
			END IF;
			RETURN NEXT;
		END LOOP;
		-- the run, as the caller (who may own the table through a role
		-- without inheriting: then it is not recorded)
		BEGIN
			INSERT INTO @extschema@.shardid_partition_log
				   (parent, step, premake, retain, epoch, result, sqlstate, message, made, dropped, moved, pruned)
			VALUES (par.oid, step, premake, retain, epoch,
					CASE WHEN n_busy OPERATOR(pg_catalog.>) 0 THEN 'busy' ELSE 'ok' END,
					CASE WHEN n_busy OPERATOR(pg_catalog.>) 0 THEN '55P03' END, NULL,
					n_made, n_dropped, n_moved, n_pruned);
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;
		END;
	END LOOP;
	PERFORM @extschema@.shardid_partition_log_purge();
END
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain_all(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
												   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of tables partitioned by range on a shardid key ahead of the clock, move rows out of their default partitions, and drop partitions older than retain, in one transaction';

CREATE FUNCTION shardid_partition_maintain(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval DEFAULT NULL,
	epoch pg_catalog.timestamptz DEFAULT '2011-01-01 00:00:00+00',
	OUT partition pg_catalog.text,
	OUT action pg_catalog.text,
	OUT range_start pg_catalog.timestamptz,
	OUT range_end pg_catalog.timestamptz)
RETURNS SETOF pg_catalog.record
LANGUAGE sql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT m.partition, m.action, m.range_start, m.range_end
	  FROM @extschema@.shardid_partition_maintain_all(ARRAY[parent], step, premake, retain, epoch) AS m
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
											   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of a table partitioned by range on a shardid key ahead of the clock, move rows out of its default partition, and drop partitions older than retain';

-- The maintenance to leave running: each parent in transactions of its
-- own (make, then drop), so that a run holds one parent's locks at a time
-- and one parent's failure stays with it.  A procedure with no SET clause
-- (one could not commit): it sets search_path itself in each transaction.
CREATE PROCEDURE shardid_partition_run(
	parents pg_catalog.regclass[],
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval DEFAULT NULL,
	epoch pg_catalog.timestamptz DEFAULT NULL,
	lock_wait pg_catalog.interval DEFAULT '1 s')
LANGUAGE plpgsql SECURITY INVOKER
AS $pr$
DECLARE
	oids pg_catalog.oid[];
	names pg_catalog.text[];
	i pg_catalog.int4;
	w record;
	result pg_catalog.text;
	state pg_catalog.text;
	msg pg_catalog.text;
	n_made pg_catalog.int4;
	n_dropped pg_catalog.int4;
	n_moved pg_catalog.int8;
	n_pruned pg_catalog.int8;
	n_failed pg_catalog.int4 := 0;
	n_busy pg_catalog.int4 := 0;
	first_state pg_catalog.text;
	report pg_catalog.text := '';
BEGIN
	PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
	IF parents IS NULL OR pg_catalog.array_position(parents, NULL) IS NOT NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent table must not be null';
	END IF;
	IF lock_wait IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'lock_wait must not be null',
			HINT = 'lock_wait bounds each lock wait of a maintenance step, such as ''1 s''.';
	END IF;
	epoch := COALESCE(epoch, @extschema@.shardid_epoch());
	-- the arguments, before any parent
	PERFORM FROM @extschema@.shardid_partition_work(NULL, step, premake, retain, epoch, lock_wait,
													   false, false);
	SELECT pg_catalog.array_agg(p.oid ORDER BY p.nspname, p.relname, p.oid),
		   pg_catalog.array_agg(CASE WHEN p.relname IS NULL THEN p.oid::pg_catalog.text
									 ELSE pg_catalog.format('%I.%I', p.nspname, p.relname) END
								ORDER BY p.nspname, p.relname, p.oid)
	  INTO oids, names
	  FROM (SELECT DISTINCT u.rel::pg_catalog.oid AS oid, n.nspname, c.relname
			  FROM pg_catalog.unnest(parents) AS u(rel)
			  LEFT JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
			  LEFT JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace) AS p;
	PERFORM @extschema@.shardid_partition_log_purge();
	COMMIT;

	FOR i IN 1 .. COALESCE(pg_catalog.cardinality(oids), 0) LOOP
		PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
		result := 'ok';
		state := NULL;
		msg := NULL;
		n_made := 0;
		n_dropped := 0;
		n_moved := 0;
		n_pruned := 0;

		-- make: its own transaction
		BEGIN
			FOR w IN
				SELECT * FROM @extschema@.shardid_partition_work(oids[i]::pg_catalog.regclass, step, premake,
																 retain, epoch, lock_wait, true, false)
			LOOP
				IF w.action OPERATOR(pg_catalog.=) 'created' THEN
					n_made := n_made OPERATOR(pg_catalog.+) 1;
					n_moved := n_moved OPERATOR(pg_catalog.+) w.moved;
				ELSIF w.action OPERATOR(pg_catalog.=) 'busy' THEN
					result := 'busy';
				END IF;
			END LOOP;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
			result := 'failed';
			n_made := 0;
			n_moved := 0;
		END;
		COMMIT;
		PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);

		-- drop: its own transaction, with the record of the run
		IF state IS NULL OR state OPERATOR(pg_catalog.<>) '42P01' THEN
			BEGIN
				FOR w IN
					SELECT * FROM @extschema@.shardid_partition_work(oids[i]::pg_catalog.regclass, step, premake,
																	 retain, epoch, lock_wait, false, true)
				LOOP
					IF w.action OPERATOR(pg_catalog.=) 'dropped' THEN
						n_dropped := n_dropped OPERATOR(pg_catalog.+) 1;
					ELSIF w.action OPERATOR(pg_catalog.=) 'pruned' THEN
						n_pruned := n_pruned OPERATOR(pg_catalog.+) w.moved;
					ELSIF w.action OPERATOR(pg_catalog.=) 'busy' AND result OPERATOR(pg_catalog.=) 'ok' THEN
						result := 'busy';
					END IF;
				END LOOP;
			EXCEPTION WHEN OTHERS THEN
				n_dropped := 0;
				n_pruned := 0;
				IF result OPERATOR(pg_catalog.<>) 'failed' THEN
					GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
					result := 'failed';
				END IF;
			END;
		END IF;
		IF result OPERATOR(pg_catalog.=) 'busy' THEN
			state := '55P03';
			msg := 'a lock wait ran out (lock_wait); the next run tries again';
		END IF;
		BEGIN
			INSERT INTO @extschema@.shardid_partition_log
				   (parent, step, premake, retain, epoch, result, sqlstate, message, made, dropped, moved, pruned)
			VALUES (oids[i], step, premake, retain, epoch, result, state, msg, n_made, n_dropped, n_moved,
					n_pruned);
		EXCEPTION WHEN insufficient_privilege THEN
			NULL;				-- not recorded: the table is gone, or not the caller's
		END;
		COMMIT;

		IF result OPERATOR(pg_catalog.=) 'failed' THEN
			n_failed := n_failed OPERATOR(pg_catalog.+) 1;
			first_state := COALESCE(first_state, state);
			report := report OPERATOR(pg_catalog.||) pg_catalog.format('%s%s: %s: %s',
				CASE WHEN report OPERATOR(pg_catalog.=) '' THEN '' ELSE E'\n' END, names[i], state, msg);
			RAISE WARNING USING
				MESSAGE = pg_catalog.format('partition maintenance of table %s failed: %s: %s', names[i], state, msg),
				HINT = 'The other tables go on; see shardid_partition_status.';
		ELSIF result OPERATOR(pg_catalog.=) 'busy' THEN
			n_busy := n_busy OPERATOR(pg_catalog.+) 1;
			report := report OPERATOR(pg_catalog.||) pg_catalog.format('%s%s: busy',
				CASE WHEN report OPERATOR(pg_catalog.=) '' THEN '' ELSE E'\n' END, names[i]);
			RAISE WARNING USING
				MESSAGE = pg_catalog.format('partition maintenance of table %s is busy: a lock wait ran out after %s', names[i], lock_wait),
				HINT = 'The next run tries again.';
		END IF;
	END LOOP;

	-- so that cron and pg_cron show it
	IF n_failed OPERATOR(pg_catalog.>) 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = first_state,
			MESSAGE = pg_catalog.format('partition maintenance failed for %s of %s tables', n_failed,
										pg_catalog.cardinality(oids)),
			DETAIL = report,
			HINT = 'Every other table was maintained, and committed; see shardid_partition_status.';
	ELSIF n_busy OPERATOR(pg_catalog.>) 0 THEN
		RAISE EXCEPTION USING
			ERRCODE = 'lock_not_available',
			MESSAGE = pg_catalog.format('partition maintenance left %s of %s tables busy', n_busy,
										pg_catalog.cardinality(oids)),
			DETAIL = report,
			HINT = 'Every other table was maintained, and committed; the next run tries the busy ones again.';
	END IF;
END
$pr$;

COMMENT ON PROCEDURE shardid_partition_run(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
										   pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval) IS
'maintain the partitions of tables partitioned by range on a shardid key, each table in transactions of its own; fails at the end if any table failed or was busy';

-- The partitioned tables named table_name in every shard's schema
-- (shard_0000 to shard_8191), for a CALL, whose arguments cannot be
-- subqueries.  Only tables that the current role owns, in schemas it
-- owns: a table another role put in such a schema is never maintained
-- by mistake, with its triggers running as the caller.
CREATE FUNCTION shardid_shard_tables(table_name pg_catalog.name)
RETURNS pg_catalog.regclass[]
LANGUAGE sql STABLE STRICT PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
	SELECT COALESCE(pg_catalog.array_agg(c.oid::pg_catalog.regclass ORDER BY n.nspname), '{}')
	  FROM pg_catalog.pg_class AS c
	  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
	 WHERE c.relname OPERATOR(pg_catalog.=) table_name
	   AND c.relkind OPERATOR(pg_catalog.=) 'p'
	   AND n.nspname OPERATOR(pg_catalog.~) '^shard_[0-9]{4}$'
	   AND c.relowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) current_user)
	   AND n.nspowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname OPERATOR(pg_catalog.=) current_user)
$fn$;

COMMENT ON FUNCTION shardid_shard_tables(pg_catalog.name) IS
'the partitioned tables of that name that the current role owns in the shard schemas it owns, for shardid_partition_run';

-- One row per table that maintenance ran on and the caller may see.
CREATE FUNCTION shardid_partition_status(
	OUT parent pg_catalog.regclass,
	OUT step pg_catalog.interval,
	OUT premake pg_catalog.int4,
	OUT retain pg_catalog.interval,
	OUT partitions pg_catalog.int4,
	OUT covered_until pg_catalog.timestamptz,
	OUT ahead pg_catalog.interval,
	OUT oldest_start pg_catalog.timestamptz,
	OUT default_partition pg_catalog.regclass,
	OUT default_rows pg_catalog.int8,
	OUT last_run pg_catalog.timestamptz,
	OUT last_result pg_catalog.text,
	OUT last_sqlstate pg_catalog.text,
	OUT last_message pg_catalog.text,
	OUT made pg_catalog.int4,
	OUT dropped pg_catalog.int4,
	OUT moved pg_catalog.int8,
	OUT pruned pg_catalog.int8)
RETURNS SETOF pg_catalog.record
LANGUAGE plpgsql VOLATILE PARALLEL RESTRICTED SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	l record;
	now_id pg_catalog.numeric;
	los pg_catalog.numeric[];
	his pg_catalog.numeric[];
	i pg_catalog.int4;
BEGIN
	FOR l IN
		SELECT g.*, c.oid::pg_catalog.regclass AS rel, pt.partdefid
		  FROM (SELECT DISTINCT ON (o.parent) o.*
				  FROM @extschema@.shardid_partition_log AS o
				 ORDER BY o.parent, o.ran_at DESC) AS g
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) g.parent
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		  JOIN pg_catalog.pg_partitioned_table AS pt ON pt.partrelid OPERATOR(pg_catalog.=) c.oid
		 ORDER BY n.nspname, c.relname
	LOOP
		parent := l.rel;
		step := l.step;
		premake := l.premake;
		retain := l.retain;
		SELECT pg_catalog.count(*), pg_catalog.array_agg(b.lo ORDER BY b.lo),
			   pg_catalog.array_agg(b.hi ORDER BY b.lo)
		  INTO partitions, los, his
		  FROM @extschema@.shardid_partition_ranges(l.parent) AS b;
		oldest_start := CASE WHEN los IS NULL THEN NULL
							 WHEN los[1] OPERATOR(pg_catalog.<) 0 THEN '-infinity'
							 ELSE @extschema@.shardid_created_at(los[1]::pg_catalog.int8, l.epoch) END;
		-- the run of partitions, each starting where the one before ends,
		-- from the one that holds now()
		covered_until := NULL;
		ahead := NULL;
		IF los IS NOT NULL
		   AND pg_catalog.now() OPERATOR(pg_catalog.<) @extschema@.shardid_horizon(l.epoch) THEN
			now_id := @extschema@.shardid_floor(pg_catalog.now(), l.epoch)::pg_catalog.numeric;
			i := 1;
			WHILE i OPERATOR(pg_catalog.<=) partitions AND his[i] OPERATOR(pg_catalog.<=) now_id LOOP
				i := i OPERATOR(pg_catalog.+) 1;
			END LOOP;
			IF i OPERATOR(pg_catalog.<=) partitions AND los[i] OPERATOR(pg_catalog.<=) now_id THEN
				WHILE i OPERATOR(pg_catalog.<) partitions
					  AND los[i OPERATOR(pg_catalog.+) 1] OPERATOR(pg_catalog.=) his[i] LOOP
					i := i OPERATOR(pg_catalog.+) 1;
				END LOOP;
				covered_until := CASE WHEN his[i] OPERATOR(pg_catalog.>) 9223372036854775807 THEN 'infinity'
									  ELSE @extschema@.shardid_created_at(his[i]::pg_catalog.int8, l.epoch) END;
				ahead := covered_until OPERATOR(pg_catalog.-) pg_catalog.now();
			END IF;
		END IF;
		-- The default partition's rows, if the caller may read it.  Each
		-- count runs in a subtransaction that is then rolled back on
		-- purpose, so that its lock goes with it: over thousands of tables
		-- the status would otherwise hold a lock per table and fill the
		-- lock table.
		-- Only where counting runs no other role's code: the caller acts as
		-- the table's owner, or the default partition has no row security
		-- (whose policies would run as the caller).  A wait for its lock
		-- is bounded: NULL after a second.
		default_partition := NULLIF(l.partdefid, 0)::pg_catalog.regclass;
		default_rows := NULL;
		IF default_partition IS NOT NULL
		   AND pg_catalog.has_table_privilege(default_partition, 'SELECT')
		   AND EXISTS (SELECT FROM pg_catalog.pg_class AS d
						WHERE d.oid OPERATOR(pg_catalog.=) l.partdefid
						  AND (pg_catalog.pg_has_role(d.relowner, 'USAGE') OR NOT d.relrowsecurity)) THEN
			BEGIN
				PERFORM pg_catalog.set_config('lock_timeout', '1000', true);
				EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM ONLY %s', default_partition)
				   INTO default_rows;
				RAISE EXCEPTION USING ERRCODE = 'SD001';
			EXCEPTION
				WHEN SQLSTATE 'SD001' THEN
					NULL;		-- default_rows is kept: variables are not rolled back
				WHEN lock_not_available THEN
					default_rows := NULL;
			END;
		END IF;
		last_run := l.ran_at;
		last_result := l.result;
		last_sqlstate := l.sqlstate;
		last_message := l.message;
		made := l.made;
		dropped := l.dropped;
		moved := l.moved;
		pruned := l.pruned;
		RETURN NEXT;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_status() IS
'the partition maintenance of each table it ran on: how far ahead the partitions go, the rows in the default partition, and the last run';

CREATE VIEW shardid_partition_status AS
	SELECT * FROM @extschema@.shardid_partition_status();

COMMENT ON VIEW shardid_partition_status IS
'the partition maintenance of each table it ran on: how far ahead the partitions go, the rows in the default partition, and the last run';

GRANT SELECT ON shardid_partition_status TO PUBLIC;
