-- The first ID shardid may have issued in a table's key column, as the
-- table itself records it in the column's sequences (the one its default
-- draws from, and any OWNED BY it), or 0 for a column without one.  Keys
-- below it are not IDs shardid issued, and retention never deletes them,
-- however old they decode:
--   - shardid_adopt sets the sequence's START to shardid_fence_value(ms),
--     where ms is the time field of the adoption: every key the table had
--     then is below shardid_field_floor(ms + 1), the first ID of the
--     millisecond after it, whatever it was, and so is any such key
--     inserted later;
--   - a sequence's value is far below any ID (an ID holds the
--     milliseconds since the epoch times 2^23; a value is a count, or a
--     fence in milliseconds times 2^10), so that the keys a bigserial or
--     identity column had before shardid took it over are at or below
--     it, adopted or not;
--   - a key below 0 is never an ID.
-- The record is the sequence rather than a table of the extension's
-- because the sequence goes wherever the table goes: pg_dump -t dumps a
-- table's owned sequences with their parameters and values, DROP
-- EXTENSION leaves them, shardid-fleet's shard moves copy them, and their
-- OIDs are no part of it.  A table of the extension's would be lost by
-- each of these, and retention would then take the old keys for old IDs.
-- Only the sequence's owner may change its START (and roles with UPDATE
-- on it its value), so a role moves the boundary only for tables it is
-- trusted with; a START set higher keeps more, never less.  Only catalogs
-- and sequences are read: no code of the table's runs.
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
	adopted pg_catalog.numeric := 0;
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
		-- a START that carries a fence: the first ID of the millisecond
		-- after it (at most the last time field's)
		IF @extschema@.shardid_value_fence(seq.seqstart) >= 0 THEN
			adopted := GREATEST(adopted, @extschema@.shardid_field_floor(
				LEAST(@extschema@.shardid_value_fence(seq.seqstart) + 1,
					  @extschema@.shardid_id_field(9223372036854775807))));
		END IF;
	END LOOP;
	RETURN LEAST(GREATEST(top + 1, adopted), 9223372036854775807)::pg_catalog.int8;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_first_id(pg_catalog.regclass) IS
'internal: the first ID shardid may have issued in a table''s key column, from its sequences: retention keeps every key below it';
