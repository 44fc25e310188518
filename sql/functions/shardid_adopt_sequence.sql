-- A new sequence of a column's own, for shardid_adopt: in the table's
-- schema, named <table>_<column>_seq as for bigserial (each part cut to 24
-- bytes, whole characters, so that the name fits NAMEDATALEN, and a
-- number added while the name is taken), OWNED BY the column, and usable
-- by every role that may insert into the table.
CREATE FUNCTION shardid_adopt_sequence(tbl pg_catalog.regclass, col pg_catalog.name)
RETURNS pg_catalog.regclass
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	schema_name pg_catalog.name;
	part pg_catalog.text;
	seq_name pg_catalog.text;
	n pg_catalog.int4 := 0;
	seq pg_catalog.regclass;
	grantee record;
BEGIN
	SELECT ns.nspname, pg_catalog.left(c.relname, 24) INTO schema_name, part
	  FROM pg_catalog.pg_class AS c
	  JOIN pg_catalog.pg_namespace AS ns ON ns.oid = c.relnamespace
	 WHERE c.oid = tbl;
	WHILE pg_catalog.octet_length(part) > 24 LOOP
		part := pg_catalog.left(part, -1);
	END LOOP;
	seq_name := pg_catalog.left(col, 24);
	WHILE pg_catalog.octet_length(seq_name) > 24 LOOP
		seq_name := pg_catalog.left(seq_name, -1);
	END LOOP;
	seq_name := part || '_' || seq_name || '_seq';
	WHILE EXISTS (
		SELECT FROM pg_catalog.pg_class AS c
		  JOIN pg_catalog.pg_namespace AS ns ON ns.oid = c.relnamespace
		 WHERE ns.nspname = schema_name
		   AND c.relname = seq_name || CASE WHEN n > 0 THEN n::pg_catalog.text ELSE '' END) LOOP
		n := n + 1;
	END LOOP;
	IF n > 0 THEN
		seq_name := seq_name || n::pg_catalog.text;
	END IF;
	EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS pg_catalog.int8 OWNED BY %s.%I',
							  schema_name, seq_name, tbl, col);
	seq := pg_catalog.format('%I.%I', schema_name, seq_name)::pg_catalog.regclass;
	FOR grantee IN
		SELECT DISTINCT a.grantee
		  FROM pg_catalog.pg_class AS c, pg_catalog.aclexplode(c.relacl) AS a
		 WHERE c.oid = tbl
		   AND a.privilege_type = 'INSERT'
		   AND a.grantee <> c.relowner
	LOOP
		IF grantee.grantee = 0 THEN
			EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE %s TO PUBLIC', seq);
		ELSE
			EXECUTE pg_catalog.format('GRANT USAGE ON SEQUENCE %s TO %I', seq,
									  pg_catalog.pg_get_userbyid(grantee.grantee));
		END IF;
	END LOOP;
	RETURN seq;
END
$fn$;

COMMENT ON FUNCTION shardid_adopt_sequence(pg_catalog.regclass, pg_catalog.name) IS
'internal: a new sequence OWNED BY a column, for shardid_adopt, usable by whoever may insert into its table';
