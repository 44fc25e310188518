--
-- shardid_adopt: an existing table's bigint key becomes a shardid key on
-- the column's own sequence, whether it was bigserial, an identity, or a
-- bigint fed by some other sequence; refusals with their SQLSTATEs.
--
\set ECHO none
\getenv abs_srcdir PG_ABS_SRCDIR
\set err_file :abs_srcdir '/sql/include/err.sql'
\i :err_file
\set ECHO all
SET timezone = 'UTC';
\set SHOW_CONTEXT never

-- bigserial: its sequence is kept, the default changes, and nothing else.
CREATE TABLE adopt_serial (id bigserial PRIMARY KEY, note text);
INSERT INTO adopt_serial (note) SELECT 'before' FROM generate_series(1, 100);
SELECT 'adopt_serial_id_seq'::regclass::oid AS serial_seq \gset
SELECT sequence, action, previous_default FROM shardid_adopt('adopt_serial', 42);
SELECT 'adopt_serial_id_seq'::regclass::oid = :serial_seq AS same_sequence,
       pg_get_serial_sequence('adopt_serial', 'id') AS owned_by_the_column,
       pg_get_expr(d.adbin, d.adrelid) AS new_default
  FROM pg_attrdef d WHERE d.adrelid = 'adopt_serial'::regclass;
INSERT INTO adopt_serial (note) SELECT 'after' FROM generate_series(1, 100);
SELECT note, count(*), bool_and(shardid_shard(id) = 42) AS on_shard_42,
       min(id) > (SELECT max(id) FROM adopt_serial WHERE note = 'before') AS after_the_old_keys
  FROM adopt_serial WHERE note = 'after' GROUP BY note;
-- the sequence went on counting: the first new ID's low ten bits are 101,
-- and the sequence then carries the new IDs' durable fence
SELECT shardid_seq(min(id)) AS first_new_seq FROM adopt_serial WHERE note = 'after';
SELECT (last_value >> 10) - 1 >= (SELECT max(id) >> 23 FROM adopt_serial) AS fence_covers
  FROM adopt_serial_id_seq;
-- idempotent
SELECT sequence, action FROM shardid_adopt('adopt_serial', 42);
-- another shard for the same table is a move, not an adoption
SELECT err($$SELECT shardid_adopt('adopt_serial', 43)$$);

-- An identity column: the identity goes, and a sequence of the column's
-- own goes on where the identity's stood.  GENERATED ALWAYS included.
CREATE TABLE adopt_ident (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text);
INSERT INTO adopt_ident (note) SELECT 'before' FROM generate_series(1, 50);
SELECT sequence, action, previous_default FROM shardid_adopt('adopt_ident', 7);
SELECT a.attidentity = '' AS identity_dropped,
       pg_get_serial_sequence('adopt_ident', 'id') AS owned_by_the_column,
       (SELECT last_value FROM adopt_ident_id_seq) AS goes_on_from
  FROM pg_attribute a WHERE a.attrelid = 'adopt_ident'::regclass AND a.attname = 'id';
INSERT INTO adopt_ident (note) VALUES ('after');
SELECT shardid_shard(id) AS shard, shardid_seq(id) AS seq FROM adopt_ident WHERE note = 'after';
SELECT sequence, action FROM shardid_adopt('adopt_ident', 7);
-- DROP TABLE takes the sequence with it: it is OWNED BY the column
DROP TABLE adopt_ident;
SELECT to_regclass('adopt_ident_id_seq') AS sequence_dropped_with_table;

-- A bigint fed by a sequence it does not own (here shared with another
-- table): it gets a sequence of its own, and the shared one is left alone.
CREATE SEQUENCE adopt_shared;
CREATE TABLE adopt_fed (id bigint PRIMARY KEY DEFAULT nextval('adopt_shared'), note text);
-- a name that is taken makes the new sequence take the next free one
CREATE SEQUENCE adopt_fed_id_seq;
INSERT INTO adopt_fed (note) VALUES ('before');
CREATE ROLE regress_adopt_writer;
GRANT INSERT, SELECT ON adopt_fed TO regress_adopt_writer;
SELECT sequence, action, previous_default FROM shardid_adopt('adopt_fed', 9);
SELECT pg_get_serial_sequence('adopt_fed', 'id') AS owned_by_the_column,
       has_sequence_privilege('regress_adopt_writer', 'adopt_fed_id_seq1', 'USAGE') AS writer_may_use_it;
SET ROLE regress_adopt_writer;
INSERT INTO adopt_fed (note) VALUES ('by the writer');
RESET ROLE;
SELECT shardid_shard(id) FROM adopt_fed WHERE note = 'by the writer';
-- and no default at all: the same
CREATE TABLE adopt_bare (k bigint PRIMARY KEY, note text);
SELECT sequence, action, previous_default FROM shardid_adopt('adopt_bare', 9, 'k');

-- Refusals.
CREATE TABLE adopt_int (id serial PRIMARY KEY);
SELECT err($$SELECT shardid_adopt('adopt_int', 1)$$);
SELECT err($$SELECT shardid_adopt('adopt_serial', 8192)$$);
SELECT err($$SELECT shardid_adopt('adopt_serial', 1, 'nope')$$);
CREATE VIEW adopt_view AS SELECT 1::bigint AS id;
SELECT err($$SELECT shardid_adopt('adopt_view', 1)$$);
CREATE TABLE adopt_gen (x bigint, id bigint GENERATED ALWAYS AS (x * 2) STORED);
SELECT err($$SELECT shardid_adopt('adopt_gen', 1)$$);
-- keys that new IDs could repeat: values already as large as shardid IDs
CREATE TABLE adopt_big (id bigserial PRIMARY KEY);
INSERT INTO adopt_big VALUES (shardid_encode('2040-01-01+00', 1, 0));
SELECT regexp_replace(err($$SELECT shardid_adopt('adopt_big', 1)$$), '\d{10,}', 'N', 'g') AS too_big;
-- the default did not change
SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d WHERE d.adrelid = 'adopt_big'::regclass;
-- not the owner
SET ROLE regress_adopt_writer;
SELECT err($$SELECT shardid_adopt('adopt_fed', 9)$$);
RESET ROLE;

DROP TABLE adopt_serial, adopt_fed, adopt_bare, adopt_int, adopt_gen, adopt_big;
DROP VIEW adopt_view;
DROP SEQUENCE adopt_shared, adopt_fed_id_seq;
DROP ROLE regress_adopt_writer;
