--
-- Time partitions
--
-- A table partitioned BY RANGE (id) on a shardid key is partitioned by
-- time: the partition for [t1, t2) holds exactly the IDs from
-- shardid_floor(t1) up to, not including, shardid_floor(t2), on every
-- shard.  Maintenance keeps such tables partitioned ahead of the clock
-- (never of max(id), so a table that receives no rows has no gaps either),
-- gives rows that landed in the default partition partitions of their own
-- and moves them there, and drops whole partitions older than a retention
-- interval.
--
--   shardid_partition_run (a procedure) handles each parent in its own
--     transactions, so one parent's trouble stays with it and the locks
--     held at any time are one parent's;
--   shardid_partition_maintain_all / shardid_partition_maintain (functions)
--     do the same work inside the caller's transaction;
--   shardid_partition_status shows, per parent, how far ahead it is
--     covered, its default partition's rows and its last run.
--
-- Locks (docs/partitions.md has the table).  Every step locks in one
-- order, the order in which queries and inserts lock: the parent, then
-- its default partition, then a partition.  Each wait is bounded
-- (lock_timeout, set from the caller's lock_wait for the step); a step
-- that runs out of time is reported "busy", undone, and tried again by
-- the next run.
--   - making partitions: SHARE UPDATE EXCLUSIVE on the parent (it blocks
--     no query, insert, update or delete), then, when the parent has a
--     default partition and something is to be attached or moved, ACCESS
--     EXCLUSIVE on the default partition, as ATTACH PARTITION would take
--     it anyway;
--   - retention: ACCESS EXCLUSIVE on the parent, taken first, then DROP
--     TABLE of each partition past the cutoff (which locks the default
--     partition after the parent);
--   - both in one transaction (the functions): ACCESS EXCLUSIVE on the
--     parent first, if anything is to be dropped, so that the default
--     partition is never locked before the parent; if that wait runs out,
--     the drops are "busy" and the partitions are made as above.
-- No step holds the default partition while it waits for the parent,
-- which is how readers (the parent, then its partitions) and maintenance
-- deadlocked in 1.1.
--

-- The runs on each parent.  Maintenance appends a row per parent and
-- run, as the role that ran it; shardid_partition_status reads the last
-- one; shardid_partition_log_purge keeps only that one.  Any role may add
-- rows for its own tables, so the table refuses what no run could write:
-- an epoch that shardid_horizon() refuses (not finite, not a whole
-- millisecond, or so late that its horizon, 2^40 - 1 ms on, is no
-- timestamp), one after the run or whose horizon the run was past, a
-- step that is not
-- positive, a premake outside 0 to 1000, a retention that is not
-- positive, negative counts, an SQLSTATE that is not five characters, or
-- one with "ok" (or none without): its checks, in
-- shardid_partition_log_checks.sql, which the update from 1.2 runs too.
CREATE TABLE shardid_partition_log (
	parent		pg_catalog.oid NOT NULL,
	ran_at		pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
	step		pg_catalog.interval NOT NULL,
	premake		pg_catalog.int4 NOT NULL,
	retain		pg_catalog.interval,
	epoch		pg_catalog.timestamptz NOT NULL,
	result		pg_catalog.text NOT NULL
		CHECK (result OPERATOR(pg_catalog.=) ANY ('{ok,busy,failed}'::pg_catalog.text[])),
	sqlstate	pg_catalog.text,
	message		pg_catalog.text,
	made		pg_catalog.int4 NOT NULL,
	dropped		pg_catalog.int4 NOT NULL,
	moved		pg_catalog.int8 NOT NULL,
	pruned		pg_catalog.int8 NOT NULL,
	-- when the run kept rows or partitions past the retention because
	-- their keys are below the table's first shardid ID: that ID
	kept_below	pg_catalog.int8
);

CREATE INDEX shardid_partition_log_parent ON shardid_partition_log (parent, ran_at);

COMMENT ON TABLE shardid_partition_log IS
'partition maintenance runs, a row per table and run; read the last through shardid_partition_status';

-- Any role may add the runs of tables it owns (is a member of the owning
-- role of), and read them; members of pg_monitor read all.  No role but
-- the extension's owner may change or delete a row, or lock the table
-- against others: INSERT and SELECT allow only the weak lock modes.
REVOKE ALL ON TABLE shardid_partition_log FROM PUBLIC;

GRANT SELECT, INSERT ON TABLE shardid_partition_log TO PUBLIC;

ALTER TABLE shardid_partition_log ENABLE ROW LEVEL SECURITY;

CREATE POLICY shardid_partition_log_read ON shardid_partition_log FOR SELECT
	USING (pg_catalog.pg_has_role('pg_monitor', 'USAGE')
		   OR EXISTS (SELECT FROM pg_catalog.pg_class AS c
					   WHERE c.oid OPERATOR(pg_catalog.=) parent
						 AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));

CREATE POLICY shardid_partition_log_add ON shardid_partition_log FOR INSERT
	WITH CHECK (EXISTS (SELECT FROM pg_catalog.pg_class AS c
						 WHERE c.oid OPERATOR(pg_catalog.=) parent
						   AND c.relkind OPERATOR(pg_catalog.=) 'p'
						   AND pg_catalog.pg_has_role(c.relowner, 'USAGE')));
