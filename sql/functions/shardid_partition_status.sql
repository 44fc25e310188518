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
	OUT pruned pg_catalog.int8,
	OUT kept_below pg_catalog.int8)
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
	horizon pg_catalog.timestamptz;
	bad_state pg_catalog.text;
	bad_message pg_catalog.text;
BEGIN
	FOR l IN
		SELECT g.*, c.oid::pg_catalog.regclass AS rel, pt.partdefid
		  FROM (SELECT DISTINCT ON (o.parent) o.*
				  FROM @extschema@.shardid_partition_log AS o
				 ORDER BY o.parent, o.ran_at DESC) AS g
		  JOIN pg_catalog.pg_class AS c ON c.oid = g.parent
		  JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
		  JOIN pg_catalog.pg_partitioned_table AS pt ON pt.partrelid = c.oid
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
		-- Times from the run's epoch.  A record that no run could have
		-- written (the log refuses them since 1.3) is reported as
		-- "invalid", with the error, rather than failing the whole status.
		oldest_start := NULL;
		covered_until := NULL;
		ahead := NULL;
		bad_state := NULL;
		BEGIN
			horizon := @extschema@.shardid_horizon(l.epoch);
			oldest_start := CASE WHEN los IS NULL THEN NULL
								 WHEN los[1] < 0 THEN '-infinity'
								 ELSE @extschema@.shardid_created_at(los[1]::pg_catalog.int8, l.epoch) END;
			-- the run of partitions, each starting where the one before
			-- ends, from the one that holds now()
			IF los IS NOT NULL AND pg_catalog.now() < horizon THEN
				now_id := @extschema@.shardid_floor(pg_catalog.now(), l.epoch)::pg_catalog.numeric;
				i := 1;
				WHILE i <= partitions AND his[i] <= now_id LOOP
					i := i + 1;
				END LOOP;
				IF i <= partitions AND los[i] <= now_id THEN
					WHILE i < partitions AND los[i + 1] = his[i] LOOP
						i := i + 1;
					END LOOP;
					covered_until := CASE WHEN his[i] > 9223372036854775807 THEN 'infinity'
										  ELSE @extschema@.shardid_created_at(his[i]::pg_catalog.int8, l.epoch) END;
					ahead := covered_until - pg_catalog.now();
				END IF;
			END IF;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS bad_state = RETURNED_SQLSTATE, bad_message = MESSAGE_TEXT;
			oldest_start := NULL;
			covered_until := NULL;
			ahead := NULL;
		END;
		-- The default partition's rows, if the caller may read it.  Each
		-- count runs in a subtransaction that is then rolled back on
		-- purpose, so that its lock goes with it: over thousands of tables
		-- the status would otherwise hold a lock per table and fill the
		-- lock table.
		-- Counted as the table's owner, in a security-restricted operation
		-- (shardid_rows_count), so that the planning and the scan run the
		-- owner's code (index predicates, policies) with the owner's
		-- rights, never the reader's; and only where the owner's count is
		-- the caller's (the caller acts as the owner, or the default
		-- partition has no row security).  A wait for its lock is bounded:
		-- NULL after a second; so is a partition that cannot be read.
		default_partition := NULLIF(l.partdefid, 0)::pg_catalog.regclass;
		default_rows := NULL;
		IF default_partition IS NOT NULL
		   AND pg_catalog.has_table_privilege(default_partition, 'SELECT')
		   AND EXISTS (SELECT FROM pg_catalog.pg_class AS d
						WHERE d.oid = l.partdefid
						  AND (pg_catalog.pg_has_role(d.relowner, 'USAGE') OR NOT d.relrowsecurity)) THEN
			BEGIN
				PERFORM pg_catalog.set_config('lock_timeout', '1000', true);
				default_rows := @extschema@.shardid_rows_count(default_partition);
				RAISE EXCEPTION USING ERRCODE = 'SD001';
			EXCEPTION
				WHEN SQLSTATE 'SD001' THEN
					NULL;		-- default_rows is kept: variables are not rolled back
				WHEN OTHERS THEN
					default_rows := NULL;	-- a lock wait ran out, or it cannot be read
			END;
		END IF;
		last_run := l.ran_at;
		last_result := CASE WHEN bad_state IS NULL THEN l.result ELSE 'invalid' END;
		last_sqlstate := COALESCE(bad_state, l.sqlstate);
		last_message := CASE WHEN bad_state IS NULL THEN l.message
							 ELSE pg_catalog.format('the record of the last run cannot be read: %s', bad_message) END;
		made := l.made;
		dropped := l.dropped;
		moved := l.moved;
		pruned := l.pruned;
		kept_below := l.kept_below;
		RETURN NEXT;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_status() IS
'the partition maintenance of each table it ran on: how far ahead the partitions go, the rows in the default partition, and the last run';
