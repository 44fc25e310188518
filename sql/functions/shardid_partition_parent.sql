-- The parent of a maintenance step, checked: a table partitioned by range
-- on one bigint column with the built-in operator class, owned by the
-- caller (a member of its owning role).  Its schema, name, owner,
-- tablespace and key column, and its default partition if it has one,
-- for the step that follows (which holds the parent's lock, so that no
-- default partition is attached or detached meanwhile).
CREATE FUNCTION shardid_partition_parent(
	parent pg_catalog.regclass,
	OUT nspname pg_catalog.name,
	OUT relname pg_catalog.name,
	OUT relowner pg_catalog.oid,
	OUT spcname pg_catalog.name,
	OUT keyname pg_catalog.name,
	OUT def_oid pg_catalog.oid,
	OUT def_nspname pg_catalog.name,
	OUT def_relname pg_catalog.name)
RETURNS pg_catalog.record
LANGUAGE plpgsql STABLE PARALLEL SAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	kind pg_catalog."char";
	default_btree_int8 pg_catalog.oid;
BEGIN
	IF parent IS NULL THEN
		RAISE EXCEPTION USING
			ERRCODE = 'null_value_not_allowed',
			MESSAGE = 'parent table must not be null';
	END IF;
	SELECT n.nspname, c.relname, c.relowner, s.spcname, c.relkind
	  INTO nspname, relname, relowner, spcname, kind
	  FROM pg_catalog.pg_class AS c
	  JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
	  LEFT JOIN pg_catalog.pg_tablespace AS s ON s.oid = c.reltablespace
	 WHERE c.oid = parent::pg_catalog.oid;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'undefined_table',
			MESSAGE = pg_catalog.format('relation with OID %s does not exist', parent::pg_catalog.oid);
	END IF;
	IF kind <> 'p' THEN
		RAISE EXCEPTION USING
			ERRCODE = 'wrong_object_type',
			MESSAGE = pg_catalog.format('relation %s is not a partitioned table', parent),
			HINT = 'Create the table with PARTITION BY RANGE (id).';
	END IF;
	IF NOT pg_catalog.pg_has_role(relowner, 'USAGE') THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = pg_catalog.format('must be owner of table %s', parent),
			DETAIL = 'Only the owner of a partitioned table may maintain its partitions.';
	END IF;
	SELECT o.oid INTO default_btree_int8
	  FROM pg_catalog.pg_opclass AS o
	  JOIN pg_catalog.pg_am AS a ON a.oid = o.opcmethod
	 WHERE a.amname = 'btree'
	   AND o.opcintype = 'pg_catalog.int8'::pg_catalog.regtype
	   AND o.opcdefault;
	SELECT a.attname INTO keyname
	  FROM pg_catalog.pg_partitioned_table AS pt
	  JOIN pg_catalog.pg_attribute AS a ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]
	 WHERE pt.partrelid = parent::pg_catalog.oid
	   AND pt.partstrat = 'r'
	   AND pt.partnatts = 1
	   AND a.atttypid = 'pg_catalog.int8'::pg_catalog.regtype
	   AND pt.partclass[0] = default_btree_int8;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_table_definition',
			MESSAGE = pg_catalog.format('table %s is not partitioned by range on one bigint column', parent),
			DETAIL = pg_catalog.format('Its partition key is %s.', pg_catalog.pg_get_partkeydef(parent::pg_catalog.oid)),
			HINT = 'Partition a table on shardid keys with PARTITION BY RANGE (id), where id is a bigint column.';
	END IF;
	SELECT dc.oid, dn.nspname, dc.relname INTO def_oid, def_nspname, def_relname
	  FROM pg_catalog.pg_partitioned_table AS pt
	  JOIN pg_catalog.pg_class AS dc ON dc.oid = pt.partdefid
	  JOIN pg_catalog.pg_namespace AS dn ON dn.oid = dc.relnamespace
	 WHERE pt.partrelid = parent::pg_catalog.oid;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_parent(pg_catalog.regclass) IS
'internal: check that a table may have its partitions maintained by the caller, and name its parts';
