-- Lowering the fence lets IDs after target be issued again, so it refuses
-- to go below the fence of any sequence that a column's DEFAULT feeds to
-- shardid_next: each sequence carries its own, which its owner lowers
-- first with shardid_sequence_lower, knowing where that sequence's IDs
-- went.  It reads the sequences' values and the catalog, and no table:
-- a table's rows, types, casts and operators are whatever its writers
-- made them.  IDs that left the database it cannot see.
CREATE FUNCTION shardid_fence_lower(target pg_catalog.timestamptz)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
	target_field int8;
	seq record;
	seq_fence int8;
	top_seq regclass;
	top_fence int8;
	lowered int8;
	msg text;
BEGIN
	IF NOT (SELECT r.rolsuper FROM pg_roles AS r WHERE r.rolname = CURRENT_USER) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'insufficient_privilege',
			MESSAGE = 'permission denied for function shardid_fence_lower',
			HINT = 'Only a superuser may lower the durable fence: below it, IDs can be issued again.';
	END IF;

	-- the time field of target; shardid_floor refuses a time out of range
	target_field := @extschema@.shardid_id_field(@extschema@.shardid_floor(target, @extschema@.shardid_epoch()));

	-- the sequence whose fence is furthest ahead, of those the DEFAULTs
	-- that call shardid_next name (other sessions' temporary sequences,
	-- orphans of a crash too, cannot be read); its value as stored, also
	-- one the guard set with is_called false
	FOR seq IN
		SELECT DISTINCT ds.refobjid::regclass AS seq
		  FROM pg_depend AS df
		  JOIN pg_depend AS ds
			ON ds.classid = df.classid AND ds.objid = df.objid
		  JOIN pg_class AS c ON c.oid = ds.refobjid
		 WHERE df.classid = 'pg_attrdef'::regclass
		   AND df.refclassid = 'pg_proc'::regclass
		   AND df.refobjid IN (SELECT p.oid
								 FROM pg_proc AS p
								 JOIN pg_extension AS e
								   ON e.extnamespace = p.pronamespace
								WHERE e.extname = 'shardid'
								  AND p.proname = 'shardid_next')
		   AND ds.refclassid = 'pg_class'::regclass
		   AND c.relkind = 'S'
		   AND NOT pg_is_other_temp_schema(c.relnamespace)
	LOOP
		seq_fence := @extschema@.shardid_value_fence(@extschema@.shardid_sequence_value(seq.seq));
		IF top_fence IS NULL OR seq_fence > top_fence THEN
			top_seq := seq.seq;
			top_fence := seq_fence;
		END IF;
	END LOOP;

	IF target_field < top_fence THEN
		RAISE EXCEPTION USING
			ERRCODE = 'object_not_in_prerequisite_state',
			MESSAGE = format('fence cannot be lowered to %s', target),
			DETAIL = format('Sequence %s carries a durable fence at %s.', top_seq,
							@extschema@.shardid_created_at(@extschema@.shardid_field_floor(top_fence), @extschema@.shardid_epoch())),
			HINT = format('Lower the sequences'' fences first: SELECT shardid_sequence_lower(%L, %L), as the owner of each, or choose a time at or after that fence.',
						  top_seq::text, target);
	END IF;

	-- never below an ID of a sequence the guard tracks, either
	lowered := @extschema@.shardid_fence_set(target_field);
	msg := format('durable fence of database "%s" lowered to time field %s (%s)',
				  current_database(), lowered,
				  @extschema@.shardid_created_at(@extschema@.shardid_field_floor(lowered), @extschema@.shardid_epoch()));
	RAISE LOG '%', msg;
	RAISE NOTICE '%', msg;
	RETURN lowered;
END
$fn$;

COMMENT ON FUNCTION shardid_fence_lower(pg_catalog.timestamptz) IS
'superuser only: lower the durable fence of this database to target, refusing to go above it or below the fence of any sequence its columns default to; IDs that have left the database it cannot know';

REVOKE ALL ON FUNCTION shardid_fence_lower(pg_catalog.timestamptz) FROM PUBLIC;
