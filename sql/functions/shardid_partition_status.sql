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
	OUT pruned pg_catalog.int8)
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
BEGIN
	FOR l IN
		SELECT g.*, c.oid::pg_catalog.regclass AS rel, pt.partdefid
		  FROM (SELECT DISTINCT ON (o.parent) o.*
				  FROM @extschema@.shardid_partition_log AS o
				 ORDER BY o.parent, o.ran_at DESC) AS g
		  JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) g.parent
		  JOIN pg_catalog.pg_namespace AS n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
		  JOIN pg_catalog.pg_partitioned_table AS pt ON pt.partrelid OPERATOR(pg_catalog.=) c.oid
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
		oldest_start := CASE WHEN los IS NULL THEN NULL
							 WHEN los[1] OPERATOR(pg_catalog.<) 0 THEN '-infinity'
							 ELSE @extschema@.shardid_created_at(los[1]::pg_catalog.int8, l.epoch) END;
		-- the run of partitions, each starting where the one before ends,
		-- from the one that holds now()
		covered_until := NULL;
		ahead := NULL;
		IF los IS NOT NULL
		   AND pg_catalog.now() OPERATOR(pg_catalog.<) @extschema@.shardid_horizon(l.epoch) THEN
			now_id := @extschema@.shardid_floor(pg_catalog.now(), l.epoch)::pg_catalog.numeric;
			i := 1;
			WHILE i OPERATOR(pg_catalog.<=) partitions AND his[i] OPERATOR(pg_catalog.<=) now_id LOOP
				i := i OPERATOR(pg_catalog.+) 1;
			END LOOP;
			IF i OPERATOR(pg_catalog.<=) partitions AND los[i] OPERATOR(pg_catalog.<=) now_id THEN
				WHILE i OPERATOR(pg_catalog.<) partitions
					  AND los[i OPERATOR(pg_catalog.+) 1] OPERATOR(pg_catalog.=) his[i] LOOP
					i := i OPERATOR(pg_catalog.+) 1;
				END LOOP;
				covered_until := CASE WHEN his[i] OPERATOR(pg_catalog.>) 9223372036854775807 THEN 'infinity'
									  ELSE @extschema@.shardid_created_at(his[i]::pg_catalog.int8, l.epoch) END;
				ahead := covered_until OPERATOR(pg_catalog.-) pg_catalog.now();
			END IF;
		END IF;
		-- The default partition's rows, if the caller may read it.  Each
		-- count runs in a subtransaction that is then rolled back on
		-- purpose, so that its lock goes with it: over thousands of tables
		-- the status would otherwise hold a lock per table and fill the
		-- lock table.
		-- Only where counting runs no other role's code: the caller acts as
		-- the table's owner, or the default partition has no row security
		-- (whose policies would run as the caller).  A wait for its lock
		-- is bounded: NULL after a second.
		default_partition := NULLIF(l.partdefid, 0)::pg_catalog.regclass;
		default_rows := NULL;
		IF default_partition IS NOT NULL
		   AND pg_catalog.has_table_privilege(default_partition, 'SELECT')
		   AND EXISTS (SELECT FROM pg_catalog.pg_class AS d
						WHERE d.oid OPERATOR(pg_catalog.=) l.partdefid
						  AND (pg_catalog.pg_has_role(d.relowner, 'USAGE') OR NOT d.relrowsecurity)) THEN
			BEGIN
				PERFORM pg_catalog.set_config('lock_timeout', '1000', true);
				EXECUTE pg_catalog.format('SELECT pg_catalog.count(*) FROM ONLY %s', default_partition)
				   INTO default_rows;
				RAISE EXCEPTION USING ERRCODE = 'SD001';
			EXCEPTION
				WHEN SQLSTATE 'SD001' THEN
					NULL;		-- default_rows is kept: variables are not rolled back
				WHEN lock_not_available THEN
					default_rows := NULL;
			END;
		END IF;
		last_run := l.ran_at;
		last_result := l.result;
		last_sqlstate := l.sqlstate;
		last_message := l.message;
		made := l.made;
		dropped := l.dropped;
		moved := l.moved;
		pruned := l.pruned;
		RETURN NEXT;
	END LOOP;
END
$fn$;

COMMENT ON FUNCTION shardid_partition_status() IS
'the partition maintenance of each table it ran on: how far ahead the partitions go, the rows in the default partition, and the last run';
