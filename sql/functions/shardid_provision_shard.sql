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
	target pg_catalog.text;
	tmpl_oid pg_catalog.oid;
	tmpl record;
	other record;
	i pg_catalog.int4;
	schema_made pg_catalog.bool;
	done pg_catalog.text;
	res_kind pg_catalog.text[] := '{}';
	res_name pg_catalog.text[] := '{}';
	res_action pg_catalog.text[] := '{}';
	res_ord pg_catalog.int4[] := '{}';
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
	IF pg_catalog.octet_length(target) > maxlen THEN
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
	 WHERE r.rolname = current_user;
	trusted := ARRAY(SELECT r.oid FROM pg_catalog.pg_roles AS r
					  WHERE r.rolsuper OR r.oid = me);

	SELECT n.oid INTO tmpl_oid
	  FROM pg_catalog.pg_namespace AS n
	 WHERE n.nspname = template_schema;
	IF tmpl_oid IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_schema_name',
			MESSAGE = pg_catalog.format('template schema "%s" does not exist', template_schema),
			HINT = 'Create the template''s tables in a schema of their own and pass its name.';
	END IF;
	IF target = template_schema THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('schema "%s" is the template schema', target),
			DETAIL = 'A logical shard needs a schema of its own.';
	END IF;
	FOR other IN
		SELECT pg_catalog.pg_get_userbyid(n.nspowner) AS owner
		  FROM pg_catalog.pg_namespace AS n
		 WHERE n.oid = tmpl_oid
		   AND NOT n.nspowner = ANY (trusted)
	LOOP
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('template schema "%s" is owned by role "%s"',
										template_schema, other.owner),
			DETAIL = pg_catalog.format('Every shard copies the template''s tables; a template must be owned by the role that provisions (%s) or by a superuser.',
									   current_user);
	END LOOP;

	-- the template's tables, checked, and their sequences' names
	SELECT * INTO tmpl FROM @extschema@.shardid_provision_template(template_schema, trusted);

	-- The schema: made, or, if it is there, taken as it is only when it
	-- holds nothing provisioning did not make, and each of its tables is
	-- as the template has it.  Two provisionings of a shard at once meet
	-- at CREATE SCHEMA: the second waits for the first to end, and, if it
	-- committed, checks what it made (in a READ COMMITTED transaction;
	-- under a snapshot older than that, its CREATE TABLE fails with
	-- 42P07).  No lock a third role could take holds either of them up,
	-- as an advisory lock (1.2's) could.
	res_kind := res_kind || 'schema'::pg_catalog.text;
	res_name := res_name || pg_catalog.quote_ident(target);
	res_ord := res_ord || 0;
	schema_made := false;
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_namespace AS n WHERE n.nspname = target) THEN
		BEGIN
			EXECUTE pg_catalog.format('CREATE SCHEMA %I', target);
			schema_made := true;
		EXCEPTION WHEN unique_violation OR duplicate_schema THEN
			NULL;
		END;
	END IF;
	IF schema_made THEN
		res_action := res_action || 'created'::pg_catalog.text;
	ELSE
		res_action := res_action || 'exists'::pg_catalog.text;
		PERFORM @extschema@.shardid_provision_check_schema(target, template_schema, tmpl.tables, tmpl.seqs, trusted);
		FOR i IN 1 .. pg_catalog.cardinality(tmpl.tables) LOOP
			PERFORM @extschema@.shardid_provision_check_table(target, tmpl.tables[i], template_schema,
															   tmpl.templates[i]);
		END LOOP;
	END IF;

	-- Create what is missing, and check what is there: each table with
	-- its sequence.  Longer names first: an index that LIKE names after a
	-- short table (posts_pkey) then cannot take the name of a longer one.
	FOR i IN
		SELECT o.n
		  FROM pg_catalog.generate_subscripts(tmpl.tables, 1) AS o(n)
		 ORDER BY pg_catalog.octet_length(tmpl.tables[o.n]) DESC, tmpl.tables[o.n]
	LOOP
		done := @extschema@.shardid_provision_table(shard, target, tmpl.tables[i], tmpl.seqs[i], tmpl.kinds[i],
													template_schema, tmpl.templates[i]);
		res_kind := res_kind || ARRAY['table', 'sequence'];
		res_name := res_name || ARRAY[pg_catalog.format('%I.%I', target, tmpl.tables[i]),
									  pg_catalog.format('%I.%I', target, tmpl.seqs[i])];
		res_action := res_action || ARRAY[done, done];
		res_ord := res_ord || ARRAY[2 * i, 2 * i + 1];
	END LOOP;

	PERFORM @extschema@.shardid_provision_check_grants(target, trusted);

	RETURN QUERY
		SELECT r.k, r.n, r.a
		  FROM ROWS FROM (pg_catalog.unnest(res_kind), pg_catalog.unnest(res_name),
						 pg_catalog.unnest(res_action), pg_catalog.unnest(res_ord)) AS r(k, n, a, o)
		 ORDER BY r.o;
END
$fn$;

COMMENT ON FUNCTION shardid_provision_shard(pg_catalog.int4, pg_catalog.text, pg_catalog.text) IS
'create what is missing of a logical shard: its schema (default shard_NNNN), a copy of each template table and its ID sequence; takes existing objects only from the caller or a superuser';
