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
