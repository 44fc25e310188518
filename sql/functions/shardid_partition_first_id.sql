-- The first ID shardid may have issued in a table's key column, as the
-- table itself records it: one past the largest value of the column's
-- sequences (the one its default draws from, and any OWNED BY it), or 0
-- for a column without one.  Keys below it are not IDs shardid issued,
-- and retention never deletes them, however old they decode:
--   - a sequence's values are counts, far below any ID (an ID holds the
--     milliseconds since the epoch times 2^23), so that the keys a
--     bigserial or identity column had before shardid took it over are
--     below it;
--   - shardid_adopt sets the column's sequence to one before the first ID
--     it may issue, so that every key the table had then is below it,
--     whatever it was, and so is any key of that kind inserted later;
--   - a key below 0 is never an ID.
-- The record is the sequence rather than a table of the extension's
-- because the sequence goes wherever the table goes: pg_dump -t dumps a
-- table's owned sequences with their values, DROP EXTENSION leaves them,
-- shardid-fleet's shard moves carry them past their values, and their
-- OIDs are not part of it.  A table of the extension's would be lost by
-- each of these, and retention would then take the old keys for old IDs.
-- A role moves the boundary only where it may setval the sequence (its
-- owner, or UPDATE on it), so only for tables it is trusted with; a value
-- set higher keeps more, never less.  Only catalogs and sequences are
-- read: no code of the table's runs.
CREATE FUNCTION shardid_partition_first_id(parent pg_catalog.regclass)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	par record;
	keynum pg_catalog.int2;
	seq record;
	top pg_catalog.numeric := -1;
BEGIN
	SELECT * INTO par FROM @extschema@.shardid_partition_parent(parent);
	SELECT a.attnum INTO keynum
	  FROM pg_catalog.pg_attribute AS a
	 WHERE a.attrelid = parent::pg_catalog.oid AND a.attname = par.keyname;
	FOR seq IN
		SELECT s.seqrelid::pg_catalog.regclass AS rel, s.seqstart
		  FROM pg_catalog.pg_sequence AS s
		 WHERE s.seqrelid IN (
				-- OWNED BY the column (bigserial's, or an identity's)
				SELECT d.objid
				  FROM pg_catalog.pg_depend AS d
				 WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
				   AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
				   AND d.refobjid = parent::pg_catalog.oid
				   AND d.refobjsubid = keynum
				   AND d.deptype = ANY ('{a,i}'::pg_catalog."char"[])
				UNION
				-- named in the column's default
				SELECT d.refobjid
				  FROM pg_catalog.pg_depend AS d
				  JOIN pg_catalog.pg_attrdef AS ad ON ad.oid = d.objid
				 WHERE d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass
				   AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
				   AND ad.adrelid = parent::pg_catalog.oid
				   AND ad.adnum = keynum)
		 ORDER BY 1
	LOOP
		IF NOT pg_catalog.has_sequence_privilege(seq.rel, 'SELECT, USAGE') THEN
			RAISE EXCEPTION USING
				ERRCODE = 'insufficient_privilege',
				MESSAGE = pg_catalog.format('permission denied for sequence %s', seq.rel),
				DETAIL = pg_catalog.format('Its value tells which keys of table %s shardid issued; keys at or below it are never deleted by retention.', parent),
				HINT = 'Run the maintenance as the table''s owner.';
		END IF;
		top := GREATEST(top, COALESCE(pg_catalog.pg_sequence_last_value(seq.rel), seq.seqstart), seq.seqstart);
	END LOOP;
	RETURN LEAST(top + 1, 9223372036854775807)::pg_catalog.int8;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_first_id(pg_catalog.regclass) IS
'internal: the first ID shardid may have issued in a table''s key column, from its sequences: retention keeps every key below it';
