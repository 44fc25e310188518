// test/orm/node_pg_recipe.mjs: docs/orm.md's node-postgres recipe, run
// against a real server by test/t/100_orm.pl.  The server comes from
// libpq's environment variables, which node-postgres reads too (PGHOST,
// PGPORT, PGUSER, PGDATABASE); the database has the shardid extension.
// Creates the table, inserts with one query, and prints what the TAP test
// checks, one "name=value" line each; any error exits non-zero.
import pg from 'pg';

// bigint (OID 20) as a JavaScript BigInt: exact to 2^63.  Without this,
// node-postgres hands bigints over as strings, which are exact too; never
// parse them with Number() or parseInt().
pg.types.setTypeParser(20, BigInt);

// JSON with every BigInt as a string.
const bigintAsString = (key, value) =>
  typeof value === 'bigint' ? value.toString() : value;

const client = new pg.Client();
await client.connect();
try {
  // the migration
  await client.query(`
    CREATE SEQUENCE events_id_seq;
    CREATE TABLE events (
      id bigint PRIMARY KEY DEFAULT shardid_next(3, 'events_id_seq'::regclass),
      kind text NOT NULL
    );
    ALTER SEQUENCE events_id_seq OWNED BY events.id;
  `);

  // count the queries the insert sends
  let queries = 0;
  const query = client.query.bind(client);
  client.query = (...args) => { queries += 1; return query(...args); };

  const { rows } = await client.query(
    'INSERT INTO events (kind) VALUES ($1) RETURNING id', ['signup']);
  const id = rows[0].id;
  console.log(`insert_queries=${queries}`);
  console.log(`id_type=${typeof id}`);
  console.log(`id=${id}`);

  const body = JSON.stringify({ id, kind: 'signup' }, bigintAsString);
  console.log(`json=${body}`);

  // The naive ways: JSON.stringify refuses a BigInt; Number() rounds it.
  let naiveError = 'none';
  try {
    JSON.stringify({ id });
  } catch (e) {
    naiveError = e.constructor.name;
  }
  console.log(`naive_stringify_error=${naiveError}`);
  console.log(`naive_number=${BigInt(Number(id))}`);
  console.log(`naive_number_exact=${BigInt(Number(id)) === id}`);
} finally {
  await client.end();
}
