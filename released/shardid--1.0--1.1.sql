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

-- shardid_provision_shard() of 1.0 took any schema of the right name as
-- "exists", whoever had made it and whatever was attached to its tables: a
-- role that pre-created shard_NNNN with a matching table and a trigger of
-- its own got that trigger run by the next INSERT of whoever provisioned.
-- This version (same signature) trusts only objects owned by the role that
-- provisions or by a superuser, refuses with 42501 anything owned by
-- another role and any grant that lets another role attach code later
-- (CREATE on the schema, TRIGGER on a table), and with 55000 any trigger,
-- rule, policy or inheritance child that the template lacks.  The same
-- trust applies to the template, whose defaults, constraints and indexes
-- are copied into every shard.
--
-- A named owner: run it as that role (SET ROLE owner; shardid-fleet apply
-- --owner does so), and everything it creates belongs to that role.
--
-- Names are counted in bytes: a table's sequence is <table>_id_seq while
-- that fits in max_identifier_length (63) bytes, exactly as in 1.0;
-- longer table names get the longest whole-character prefix that fits,
-- "_", the first 8 hex digits of md5(<table>), and "_id_seq", so two
-- tables that share a long prefix get different sequences.  Any clash left
-- (a table named like another's sequence) is refused before anything is
-- made.
--
-- A template table that is range-partitioned on id (PARTITION BY RANGE
-- (id)) is provisioned as a partitioned parent with the same key and no
-- partitions (LIKE does not copy partitioning); partitions that are later
-- added to a shard's parent, in its schema, are accepted on a rerun.
--

CREATE OR REPLACE FUNCTION shardid_provision_shard(shard pg_catalog.int4,
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
-- End of the provisioning section
--

--
-- Time partitions
--
-- A table partitioned BY RANGE (id) on a shardid key is partitioned by
-- time: the partition for [t1, t2) holds exactly the IDs from
-- shardid_floor(t1) up to, not including, shardid_floor(t2), on every
-- shard.  shardid_partition_maintain() keeps such tables partitioned ahead
-- of the clock (never of max(id), so a table that receives no rows has no
-- gaps either), and drops whole partitions older than a retention
-- interval.  shardid_partition_maintain_all() does the same for a list of
-- tables in one transaction, such as one table in every shard's schema.
-- docs/partitions.md has the recipes and the locks taken.
--

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
	-- the step, taken apart
	step_months pg_catalog.numeric;
	step_days pg_catalog.numeric;
	step_us pg_catalog.numeric;
	step_ms pg_catalog.int8;
	suffix_format pg_catalog.text;
	-- the partitions every parent should have: [starts[i], ends[i])
	starts pg_catalog.timestamptz[] := '{}';
	ends pg_catalog.timestamptz[] := '{}';
	los pg_catalog.int8[] := '{}';
	his pg_catalog.int8[] := '{}';
	suffixes pg_catalog.text[] := '{}';
	horizon pg_catalog.timestamptz;
	t pg_catalog.timestamptz;
	k pg_catalog.int4;
	i pg_catalog.int4;
	cutoff pg_catalog.int8;
	-- one parent
	par record;
	cover record;
	gone record;
	def_name pg_catalog.text;
	new_name pg_catalog.text;
	base_name pg_catalog.text;
	space_clause pg_catalog.text;
	n_rows pg_catalog.int8;
	default_btree_int8 pg_catalog.oid;
BEGIN
	IF parents IS NULL OR step IS NULL OR premake IS NULL OR epoch IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent tables, step, premake and epoch must not be null',
			HINT = 'Pass retain as NULL to keep every partition.';
	END IF;
	IF pg_catalog.array_position(parents, NULL) IS NOT NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent table must not be null';
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

	-- The partitions wanted: the one holding now(), and premake after it.
	IF step_ms OPERATOR(pg_catalog.=) 0 THEN
		-- months since year 0, rounded down to a multiple of the step
		k := (((EXTRACT(year FROM pg_catalog.now()) OPERATOR(pg_catalog.*) 12)
			   OPERATOR(pg_catalog.+) EXTRACT(month FROM pg_catalog.now()))
			  OPERATOR(pg_catalog.-) 1)::pg_catalog.int4;
		k := k OPERATOR(pg_catalog.-) (k OPERATOR(pg_catalog.%) step_months::pg_catalog.int4);
		t := pg_catalog.make_timestamptz(k OPERATOR(pg_catalog./) 12,
										 (k OPERATOR(pg_catalog.%) 12) OPERATOR(pg_catalog.+) 1,
										 1, 0, 0, 0, 'UTC');
		suffix_format := 'YYYYMM';
	ELSE
		-- 2001-01-01 was a Monday
		t := pg_catalog.date_bin(step, pg_catalog.now(), '2001-01-01 00:00:00+00');
		suffix_format := CASE
			WHEN (step_ms OPERATOR(pg_catalog.%) 86400000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD'
			WHEN (step_ms OPERATOR(pg_catalog.%) 3600000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24'
			WHEN (step_ms OPERATOR(pg_catalog.%) 60000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MI'
			WHEN (step_ms OPERATOR(pg_catalog.%) 1000) OPERATOR(pg_catalog.=) 0 THEN 'YYYYMMDD_HH24MISS'
			ELSE 'YYYYMMDD_HH24MISSMS' END;
	END IF;
	FOR i IN 0 .. premake LOOP
		starts := starts OPERATOR(pg_catalog.||) t;
		suffixes := suffixes OPERATOR(pg_catalog.||) ('_p' OPERATOR(pg_catalog.||) pg_catalog.to_char(t, suffix_format));
		t := t OPERATOR(pg_catalog.+) step;
		ends := ends OPERATOR(pg_catalog.||) t;
		IF t OPERATOR(pg_catalog.>) horizon THEN
			RAISE EXCEPTION USING
				ERRCODE = 'datetime_field_overflow',
				MESSAGE = pg_catalog.format('partition bound %s is past the horizon of the epoch', t),
				DETAIL = pg_catalog.format('With the epoch %s, the last millisecond that encodes to a positive bigint is %s.',
										   epoch, horizon),
				HINT = 'Make fewer partitions ahead, or use a later epoch for new tables.';
		END IF;
		-- a partition that starts before the epoch starts at ID 0
		los := los OPERATOR(pg_catalog.||)
			   @extschema@.shardid_floor(GREATEST(starts[i OPERATOR(pg_catalog.+) 1], epoch), epoch);
		his := his OPERATOR(pg_catalog.||) @extschema@.shardid_floor(t, epoch);
	END LOOP;
	IF retain IS NOT NULL AND (pg_catalog.now() OPERATOR(pg_catalog.-) retain) OPERATOR(pg_catalog.>) epoch THEN
		cutoff := @extschema@.shardid_floor(pg_catalog.now() OPERATOR(pg_catalog.-) retain, epoch);
	END IF;

	SELECT o.oid INTO default_btree_int8
	  FROM pg_catalog.pg_opclass AS o
	  JOIN pg_catalog.pg_am AS a ON a.oid OPERATOR(pg_catalog.=) o.opcmethod
	 WHERE a.amname OPERATOR(pg_catalog.=) 'btree'
	   AND o.opcintype OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
	   AND o.opcdefault;

	-- Check every parent before changing anything.
	IF EXISTS (SELECT FROM pg_catalog.unnest(parents) AS u(rel)
				WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
								   WHERE c.oid OPERATOR(pg_catalog.=) u.rel)) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'undefined_table',
			MESSAGE = pg_catalog.format('relation with OID %s does not exist',
				(SELECT u.rel::pg_catalog.oid FROM pg_catalog.unnest(parents) AS u(rel)
				  WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class AS c
									 WHERE c.oid OPERATOR(pg_catalog.=) u.rel)
				  LIMIT 1));
	END IF;
	FOR par IN
		SELECT DISTINCT c.oid, c.oid::pg_catalog.regclass AS rel, c.relkind, c.relowner,
			   n.nspname, c.relname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		 ORDER BY n.nspname, c.relname
	LOOP
		IF par.relkind OPERATOR(pg_catalog.<>) 'p' THEN
			RAISE EXCEPTION USING
				ERRCODE = 'wrong_object_type',
				MESSAGE = pg_catalog.format('relation %s is not a partitioned table', par.rel),
				HINT = 'Create the table with PARTITION BY RANGE (id).';
		END IF;
		IF NOT pg_catalog.pg_has_role(par.relowner, 'USAGE') THEN
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('must be owner of table %s', par.rel),
				DETAIL = 'Only the owner of a partitioned table may maintain its partitions.';
		END IF;
		IF NOT EXISTS (
			SELECT FROM pg_catalog.pg_partitioned_table AS pt
			  JOIN pg_catalog.pg_attribute AS a
				ON a.attrelid OPERATOR(pg_catalog.=) pt.partrelid
			   AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
			 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid
			   AND pt.partstrat OPERATOR(pg_catalog.=) 'r'
			   AND pt.partnatts OPERATOR(pg_catalog.=) 1
			   AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
			   AND pt.partclass[0] OPERATOR(pg_catalog.=) default_btree_int8) THEN
			RAISE EXCEPTION USING
				ERRCODE = 'invalid_table_definition',
				MESSAGE = pg_catalog.format('table %s is not partitioned by range on one bigint column', par.rel),
				DETAIL = pg_catalog.format('Its partition key is %s.', pg_catalog.pg_get_partkeydef(par.oid)),
				HINT = 'Partition a table on shardid keys with PARTITION BY RANGE (id), where id is a bigint column.';
		END IF;
	END LOOP;

	-- Make the partitions, one parent after another, in name order so that
	-- concurrent runs lock their parents in the same order.
	FOR par IN
		SELECT DISTINCT c.oid, c.oid::pg_catalog.regclass AS rel, n.oid AS nspoid,
			   n.nspname, c.relname, s.spcname, a.attname AS keyname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		  JOIN pg_catalog.pg_partitioned_table AS pt ON pt.partrelid OPERATOR(pg_catalog.=) c.oid
		  JOIN pg_catalog.pg_attribute AS a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
										  AND a.attnum OPERATOR(pg_catalog.=) pt.partattrs[0]
		  LEFT JOIN pg_catalog.pg_tablespace AS s ON s.oid OPERATOR(pg_catalog.=) c.reltablespace
		 ORDER BY n.nspname, c.relname
	LOOP
		-- Serialises maintenance runs on this table; inserts, updates and
		-- queries go on.  ATTACH PARTITION takes the same lock.
		EXECUTE pg_catalog.format('LOCK TABLE ONLY %I.%I IN SHARE UPDATE EXCLUSIVE MODE',
								  par.nspname, par.relname);
		SELECT pg_catalog.format('%I.%I', dn.nspname, dc.relname) INTO def_name
		  FROM pg_catalog.pg_partitioned_table AS pt
		  JOIN pg_catalog.pg_class AS dc ON dc.oid OPERATOR(pg_catalog.=) pt.partdefid
		  JOIN pg_catalog.pg_namespace AS dn ON dn.oid OPERATOR(pg_catalog.=) dc.relnamespace
		 WHERE pt.partrelid OPERATOR(pg_catalog.=) par.oid;
		space_clause := CASE WHEN par.spcname IS NULL THEN ''
						ELSE pg_catalog.format(' TABLESPACE %I', par.spcname) END;
		-- Partition names are the table's name and the suffix, the table's
		-- name cut short to fit NAMEDATALEN.
		base_name := par.relname;
		WHILE (pg_catalog.octet_length(base_name) OPERATOR(pg_catalog.+)
			   pg_catalog.octet_length(suffixes[1])) OPERATOR(pg_catalog.>) 63 LOOP
			base_name := pg_catalog.left(base_name, -1);
		END LOOP;

		FOR i IN 1 .. premake OPERATOR(pg_catalog.+) 1 LOOP
			new_name := base_name OPERATOR(pg_catalog.||) suffixes[i];
			parent := par.rel;
			range_start := GREATEST(starts[i], epoch);
			range_end := ends[i];

			-- What covers this range already?
			SELECT pg_catalog.string_agg(pg_catalog.format('%I.%I', b.nspname, b.relname), ', '
										 ORDER BY b.lo) AS names,
				   pg_catalog.sum(LEAST(b.hi, his[i]::pg_catalog.numeric)
								  OPERATOR(pg_catalog.-) GREATEST(b.lo, los[i]::pg_catalog.numeric)) AS covered,
				   pg_catalog.bool_or(b.lo OPERATOR(pg_catalog.=) los[i]
									  AND b.hi OPERATOR(pg_catalog.=) his[i]) AS same
			  INTO cover
			  FROM (SELECT pn.nspname, pc.relname,
						   CASE m[1] WHEN 'MINVALUE' THEN -9223372036854775809
								ELSE pg_catalog.btrim(m[1], '''')::pg_catalog.numeric END AS lo,
						   CASE m[2] WHEN 'MAXVALUE' THEN 9223372036854775808
								ELSE pg_catalog.btrim(m[2], '''')::pg_catalog.numeric END AS hi
					  FROM pg_catalog.pg_inherits AS h
					  JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) h.inhrelid
					  JOIN pg_catalog.pg_namespace AS pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace,
						   pg_catalog.regexp_match(pg_catalog.pg_get_expr(pc.relpartbound, pc.oid),
												   '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
					 WHERE h.inhparent OPERATOR(pg_catalog.=) par.oid) AS b
			 WHERE b.lo OPERATOR(pg_catalog.<) his[i]::pg_catalog.numeric
			   AND b.hi OPERATOR(pg_catalog.>) los[i]::pg_catalog.numeric;

			IF cover.same THEN
				partition := cover.names;
				action := 'exists';
				RETURN NEXT;
				CONTINUE;
			ELSIF cover.covered OPERATOR(pg_catalog.=) (his[i]::pg_catalog.numeric
														OPERATOR(pg_catalog.-) los[i]::pg_catalog.numeric) THEN
				partition := cover.names;
				action := 'covered';
				RETURN NEXT;
				CONTINUE;
			ELSIF cover.covered IS NOT NULL THEN
				RAISE EXCEPTION USING
					ERRCODE = 'invalid_object_definition',
					MESSAGE = pg_catalog.format('new partition %I.%I of table %s would overlap partition %s',
												par.nspname, new_name, par.rel, cover.names),
					DETAIL = pg_catalog.format('The new partition would hold IDs from %s (%s) to %s (%s); the existing partitions cover part of that range.',
											   los[i], range_start, his[i], range_end),
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
											   par.rel, range_start, range_end),
					HINT = 'Rename or drop it: maintenance does not adopt existing tables.';
			END IF;

			-- A table of its own, then attached: ATTACH PARTITION needs only
			-- SHARE UPDATE EXCLUSIVE on the parent, where CREATE TABLE ...
			-- PARTITION OF would take ACCESS EXCLUSIVE.
			EXECUTE pg_catalog.format(
				'CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS'
				' INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)%s',
				par.nspname, new_name, par.nspname, par.relname, space_clause);
			BEGIN
				EXECUTE pg_catalog.format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
										  par.nspname, par.relname, par.nspname, new_name, los[i], his[i]);
			EXCEPTION WHEN check_violation THEN
				IF def_name IS NULL THEN
					RAISE;
				END IF;
				EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM %s AS d WHERE d.%I OPERATOR(pg_catalog.>=) $1 AND d.%I OPERATOR(pg_catalog.<) $2',
										  def_name, par.keyname, par.keyname)
				   INTO n_rows USING los[i], his[i];
				RAISE EXCEPTION USING
					ERRCODE = 'check_violation',
					MESSAGE = pg_catalog.format('default partition %s holds rows in the range of new partition %I.%I',
												def_name, par.nspname, new_name),
					DETAIL = pg_catalog.format('%s rows of the default partition have IDs from %s (%s) up to %s (%s). Nothing was changed.',
											   n_rows, los[i], range_start, his[i], range_end),
					HINT = 'Move those rows out of the default partition (delete them there and insert them again once the partition exists), then run the maintenance again.';
			END;
			partition := pg_catalog.format('%I.%I', par.nspname, new_name);
			action := 'created';
			RETURN NEXT;
		END LOOP;
	END LOOP;

	IF cutoff IS NULL THEN
		RETURN;
	END IF;

	-- Retention, after every parent has its new partitions: dropping a
	-- partition takes ACCESS EXCLUSIVE on its parent (and on the default
	-- partition) until the transaction ends.  A drop that times out on
	-- its lock (lock_timeout) is reported as "busy" and left for the next
	-- run; everything else done so far stands.
	FOR par IN
		SELECT DISTINCT c.oid, c.oid::pg_catalog.regclass AS rel, n.nspname, c.relname
		  FROM pg_catalog.unnest(parents) AS u(rel)
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) u.rel
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		 ORDER BY n.nspname, c.relname
	LOOP
		FOR gone IN
			SELECT b.nspname, b.relname, b.lo, b.hi
			  FROM (SELECT pn.nspname, pc.relname,
						   CASE m[1] WHEN 'MINVALUE' THEN NULL
								ELSE pg_catalog.btrim(m[1], '''')::pg_catalog.int8 END AS lo,
						   CASE m[2] WHEN 'MAXVALUE' THEN NULL
								ELSE pg_catalog.btrim(m[2], '''')::pg_catalog.int8 END AS hi
					  FROM pg_catalog.pg_inherits AS h
					  JOIN pg_catalog.pg_class AS pc ON pc.oid OPERATOR(pg_catalog.=) h.inhrelid
					  JOIN pg_catalog.pg_namespace AS pn ON pn.oid OPERATOR(pg_catalog.=) pc.relnamespace,
						   pg_catalog.regexp_match(pg_catalog.pg_get_expr(pc.relpartbound, pc.oid),
												   '^FOR VALUES FROM \((MINVALUE|''-?[0-9]+'')\) TO \((MAXVALUE|''-?[0-9]+'')\)$') AS m
					 WHERE h.inhparent OPERATOR(pg_catalog.=) par.oid) AS b
			 WHERE b.hi OPERATOR(pg_catalog.<=) cutoff
			 ORDER BY b.hi
		LOOP
			parent := par.rel;
			partition := pg_catalog.format('%I.%I', gone.nspname, gone.relname);
			range_start := CASE WHEN gone.lo OPERATOR(pg_catalog.>=) 0
							   THEN @extschema@.shardid_created_at(gone.lo, epoch) END;
			range_end := CASE WHEN gone.hi OPERATOR(pg_catalog.>=) 0
							 THEN @extschema@.shardid_created_at(gone.hi, epoch) END;
			BEGIN
				EXECUTE pg_catalog.format('DROP TABLE %I.%I', gone.nspname, gone.relname);
				action := 'dropped';
			EXCEPTION WHEN lock_not_available THEN
				action := 'busy';
			END;
			RETURN NEXT;
		END LOOP;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_maintain_all(pg_catalog.regclass[], pg_catalog.interval, pg_catalog.int4,
												   pg_catalog.interval, pg_catalog.timestamptz) IS
'make the partitions of tables partitioned by range on a shardid key ahead of the clock, and drop those older than retain';

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
'make the partitions of a table partitioned by range on a shardid key ahead of the clock, and drop those older than retain';

--
-- End of the time partitions section
--
