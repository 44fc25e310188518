"""shardid-fleet: lay logical shards out over PostgreSQL servers, route to
them with PL/Proxy, and move a logical shard from one server to another
online, with PostgreSQL's logical replication.

  shardid-fleet check  [--no-connect] MAPFILE
  shardid-fleet apply  [--api FILE] [--server CONN]... [--template-schema NAME]
                       [--extension-schema NAME] [--owner ROLE] [--batch-size N] [-v]
                       MAPFILE TEMPLATE.sql
  shardid-fleet router [--api FILE] [--cluster NAME] [--extension-schema NAME]
                       MAPFILE ROUTER_CONN
  shardid-fleet status [--cluster NAME] MAPFILE ROUTER_CONN
  shardid-fleet move   [--drop] [--cluster NAME] [--max-clock-wait SECONDS]
                       [--lock-timeout SECONDS] [--fence-timeout SECONDS]
                       [--owner ROLE] [--publisher-conn CONN]
                       MAPFILE ROUTER_CONN SHARD TO_CONN
  shardid-fleet move   --resume | --abort [--cluster NAME] [--drop] [...]
                       MAPFILE ROUTER_CONN [SHARD [TO_CONN]]

The map file is the one place that says which server holds which logical
shard; apply and move read it, move rewrites it, and router copies it into
the router database, where PL/Proxy reads it.  Format (docs/fleet.md):

  # comment
  provision FIRST LAST        logical shards that get a schema (any number
                              of lines; without one, all 8,192)
  FIRST LAST CONNSTRING       logical shards FIRST..LAST live on the server
                              that the libpq connection string names

The ranges cover logical shards 0 to 8191, each exactly once: PL/Proxy
needs a power-of-two partition count, and the router has one partition per
logical shard.

A move copies the shard's schema (pg_dump --schema-only), publishes its
tables on the old server (CREATE PUBLICATION ... FOR TABLES IN SCHEMA) and
subscribes to them on the new one (copy_data), waits for the copy and the
catch-up, then fences writes to the shard on the old server for a moment:
the new server applies everything up to the old one's WAL position, its
sequences are set past the next block of 1,024 and its clock must pass the
last millisecond of every copied ID; the old schema is renamed (retired),
the router switched, the publication and subscription dropped, and the map
file rewritten.  Every step is recorded in the router database before it is
taken, so a move stopped at any point is finished with --resume or undone
with --abort (until the router has switched).

A CONN argument is a libpq connection string, @FILE (the string is in
FILE) or env:NAME (in the environment variable NAME); a secret given on the
command line draws a warning.

Every statement is parameterized or composed with psycopg.sql; every
session runs with search_path = pg_catalog, pg_temp, as the role it logged
in as (a session that a setting of role makes another is refused), and
trusts only that role's objects, superusers' and --owner's.  Secrets never
go on a child's command line (pg_dump and psql get PGPASSWORD in their
environment and sslpassword in a private service file), nor into the map
file or the router's record of moves; a connection string printed is
rendered from what libpq parses, its password and sslpassword masked.

Needs Python 3 and psycopg 3 (Debian: python3-psycopg), and pg_dump and psql
(taken from PG_BINDIR if set, else from PATH).  Data servers need shardid in
shared_preload_libraries and wal_level = logical; the router needs PL/Proxy.

Modules, one job each:

  common     constants, errors and masked output
  fleetmap   the map file and its lock
  conn       connections, child programs, secrets and trust
  provision  check and apply
  router     the PL/Proxy router: router and status
  state      a move's recorded state (MoveState), the one reader and
             writer of the router's shardid_fleet.moves
  preflight  the checks before a move
  move       a move's steps (Move), each a method with one job
  fence      the write fence: what it locks, reads and sets, and one
             attempt at it (WriteFence)
  gate       the router's gate, shut by a move through its fence
  movecmd    the move command: start, --resume and --abort
  cli        the command line
  __main__   python3 -m shardid_fleet

The unit tests are test/fleet_unit (pytest; no server); the moves are
tested against real servers by test/t/050-054.
"""

# shardid's release (META.json and debian/changelog say the same; test/fleet_cli.py checks)
__version__ = "1.3.0"
