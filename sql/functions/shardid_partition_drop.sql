-- Retention, in the caller's transaction: the default partition's rows
-- older than the cutoff are deleted ("pruned"), as they would have gone
-- with their partition, then every partition whose range ends at or
-- before the cutoff is dropped.  Keys below the table's first shardid ID
-- (shardid_partition_first_id) are not IDs shardid issued, and are never
-- deleted by age: the rows of the default partition and the partitions
-- that hold such keys are "kept", with a WARNING.  drop_lock is what
-- shardid_partition_drop_lock gave, before anything else was locked:
-- with 'none' no partition is dropped (one that came due since would be
-- locked after the default partition), with 'busy' each is reported
-- "busy".  As for moves, no row is deleted from a table that a foreign
-- key references, nor by any role but the table's owner.  DROP TABLE
-- locks the default partition after the parent; a drop whose wait runs
-- out is "busy", and the rest wait for the next run.
CREATE FUNCTION shardid_partition_drop(
	parent pg_catalog.regclass,
	step pg_catalog.interval,
	premake pg_catalog.int4,
	retain pg_catalog.interval,
	epoch pg_catalog.timestamptz,
	lock_wait pg_catalog.interval,
	drop_lock pg_catalog.text,
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
	cutoff pg_catalog.int8;
	first_id pg_catalog.int8;
	par record;
	due pg_catalog.bool;
	gone record;
	below pg_catalog.bool;
	kept_rows pg_catalog.bool := false;
	kept_parts pg_catalog.int4 := 0;
BEGIN
	SELECT p.cutoff INTO cutoff FROM @extschema@.shardid_partition_plan(step, premake, retain, epoch, lock_wait) AS p;
	SELECT * INTO par FROM @extschema@.shardid_partition_parent(parent);
	IF drop_lock IS NULL OR drop_lock <> ALL ('{none,held,busy}'::pg_catalog.text[]) THEN
		RAISE EXCEPTION USING
			ERRCODE = 'invalid_parameter_value',
			MESSAGE = pg_catalog.format('drop lock "%s" is not none, held or busy', drop_lock);
	END IF;
	IF cutoff IS NULL THEN
		RETURN;
	END IF;
	first_id := @extschema@.shardid_partition_first_id(parent);
	PERFORM @extschema@.shardid_partition_lock_timeout(lock_wait);

	IF par.def_oid IS NOT NULL THEN
		BEGIN
			-- read as the owner, in a security-restricted operation
			due := @extschema@.shardid_rows_exist(par.def_oid::pg_catalog.regclass, par.keyname, first_id, cutoff);
			IF due THEN
				IF EXISTS (SELECT FROM pg_catalog.pg_constraint AS fk
							WHERE fk.contype = 'f'
							  AND (fk.confrelid = parent::pg_catalog.oid OR fk.confrelid = par.def_oid)) THEN
					RAISE EXCEPTION USING
						ERRCODE = 'feature_not_supported',
						MESSAGE = pg_catalog.format('cannot delete rows older than the retention from default partition %I.%I: table %s is referenced by a foreign key',
													par.def_nspname, par.def_relname, parent),
						DETAIL = pg_catalog.format('Its rows with IDs below %s (%s) are past the retention.',
												   cutoff, pg_catalog.now() - retain),
						HINT = 'Delete them yourself, then run the maintenance again.';
				END IF;
				IF par.relowner <> (SELECT r.oid FROM pg_catalog.pg_roles AS r WHERE r.rolname = current_user) THEN
					RAISE EXCEPTION USING
						ERRCODE = 'insufficient_privilege',
						MESSAGE = pg_catalog.format('must be owner of table %s to delete rows from its default partition', parent),
						DETAIL = 'Deleting rows runs the table''s triggers, which would run as the caller.',
						HINT = pg_catalog.format('Run the maintenance as role %s (SET ROLE).', par.relowner::pg_catalog.regrole);
				END IF;
				EXECUTE pg_catalog.format('DELETE FROM ONLY %I.%I AS d WHERE d.%I >= $2 AND d.%I < $1',
										  par.def_nspname, par.def_relname, par.keyname, par.keyname)
				   USING cutoff, first_id;
				GET DIAGNOSTICS moved = ROW_COUNT;
				partition := pg_catalog.format('%I.%I', par.def_nspname, par.def_relname);
				action := 'pruned';
				range_start := NULL;
				range_end := pg_catalog.now() - retain;
				RETURN NEXT;
			END IF;
			kept_rows := @extschema@.shardid_rows_exist(par.def_oid::pg_catalog.regclass, par.keyname, NULL::pg_catalog.int8, LEAST(cutoff, first_id));
			IF kept_rows THEN
				partition := pg_catalog.format('%I.%I', par.def_nspname, par.def_relname);
				action := 'kept';
				range_start := NULL;
				range_end := @extschema@.shardid_created_at(first_id, epoch);
				moved := 0;
				RETURN NEXT;
			END IF;
		EXCEPTION WHEN lock_not_available THEN
			partition := pg_catalog.format('%I.%I', par.def_nspname, par.def_relname);
			action := 'busy';
			range_start := NULL;
			range_end := NULL;
			moved := 0;
			RETURN NEXT;
			RETURN;
		END;
	END IF;

	FOR gone IN
		SELECT b.partition, b.nspname, b.relname, b.lo, b.hi, c.relrowsecurity, c.relforcerowsecurity, c.relowner
		  FROM @extschema@.shardid_partition_ranges(parent) AS b
		  JOIN pg_catalog.pg_class AS c ON c.oid = b.partition
		 WHERE b.hi <= cutoff::pg_catalog.numeric
		 ORDER BY b.hi
	LOOP
		partition := pg_catalog.format('%I.%I', gone.nspname, gone.relname);
		range_start := CASE WHEN gone.lo >= 0 THEN @extschema@.shardid_created_at(gone.lo::pg_catalog.int8, epoch) END;
		range_end := CASE WHEN gone.hi >= 0 THEN @extschema@.shardid_created_at(gone.hi::pg_catalog.int8, epoch) END;
		moved := 0;
		-- Below the first ID: kept.  The one partition that holds the
		-- first ID goes if it holds no key below it, where the owner's
		-- look (shardid_rows_exist: as the owner, in a security-restricted
		-- operation) is the caller's (no row security, or the caller acts
		-- as its owner); else it is kept too.
		below := gone.lo < first_id;
		IF below AND gone.hi > first_id
		   AND (NOT gone.relrowsecurity
				OR (pg_catalog.pg_has_role(gone.relowner, 'USAGE') AND NOT gone.relforcerowsecurity)) THEN
			BEGIN
				below := @extschema@.shardid_rows_exist(gone.partition::pg_catalog.regclass, par.keyname, NULL::pg_catalog.int8,
														first_id);
			EXCEPTION WHEN lock_not_available THEN
				action := 'busy';
				RETURN NEXT;
				EXIT;
			END;
		END IF;
		IF below THEN
			action := 'kept';
			kept_parts := kept_parts + 1;
			RETURN NEXT;
			CONTINUE;
		ELSIF drop_lock = 'none' THEN
			CONTINUE;
		ELSIF drop_lock = 'busy' THEN
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

	IF kept_rows OR kept_parts > 0 THEN
		RAISE WARNING USING
			MESSAGE = pg_catalog.format('partition maintenance keeps %s of table %s past the retention: their keys are below %s, its first shardid ID',
										pg_catalog.concat_ws(' and ',
											CASE WHEN kept_rows THEN 'rows of its default partition' END,
											CASE kept_parts WHEN 0 THEN NULL WHEN 1 THEN '1 partition'
												 ELSE pg_catalog.format('%s partitions', kept_parts) END),
										parent, first_id),
			DETAIL = pg_catalog.format('Keys below %s (as the table''s key sequence records it: the time of its adoption in its START, or its value; 0 without one) are not IDs shardid issued: they are the keys the table had before shardid_adopt, or counts, and the time they decode to (%s at the latest) says nothing of their age.',
									   first_id, @extschema@.shardid_created_at(first_id, epoch)),
			HINT = 'Delete them yourself when they are to go (docs/partitions.md, "Keys that are not shardid IDs").';
	END IF;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_drop(pg_catalog.regclass, pg_catalog.interval, pg_catalog.int4,
										   pg_catalog.interval, pg_catalog.timestamptz, pg_catalog.interval,
										   pg_catalog.text) IS
'internal: delete the rows of a table''s default partition older than retain, and drop its partitions older than retain, in the caller''s transaction';
