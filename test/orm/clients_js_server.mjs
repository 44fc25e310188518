// test/orm/clients_js_server.mjs: the JavaScript client library
// (clients/js) against a real server, through node-postgres from the npm
// registry: rows inserted with shardid_next, read back as node-postgres
// gives them (int8 as text), and every ID decoded, shortcoded, made public
// and sent through the library's JSON, compared with what the server says
// of the same ID.  Run by test/t/100_orm.pl; prints "name=value" lines;
// any error exits non-zero.  SHARDID_CLIENT_JS is the library's index.js,
// SHARDID_TEST_KEYS the server's shardid.public_id_keys.
import pg from 'pg';
import { pathToFileURL } from 'node:url';

const lib = await import(pathToFileURL(process.env.SHARDID_CLIENT_JS).href);
const publicIds = new lib.PublicIds(process.env.SHARDID_TEST_KEYS);

const client = new pg.Client();
await client.connect();
try {
  await client.query(`
    CREATE SEQUENCE items_id_seq;
    CREATE TABLE items (
      id bigint PRIMARY KEY DEFAULT shardid_next(11, 'items_id_seq'::regclass),
      n integer NOT NULL
    );
    ALTER SEQUENCE items_id_seq OWNED BY items.id;
    INSERT INTO items (n) SELECT g FROM generate_series(1, 5000) AS g;
  `);
  // what the server says of each ID, as text: nothing on the way rounds
  const { rows } = await client.query(`
    SELECT id, shardid_shard(id) AS shard, shardid_seq(id) AS seq,
           (extract(epoch FROM shardid_created_at(id)) * 1000)::bigint::text AS ms,
           shardid_to_shortcode(id) AS shortcode, shardid_public(id) AS public_id
      FROM items ORDER BY id`);
  let decode = 0, shortcode = 0, pub = 0, priv = 0, json = 0, rounded = 0;
  for (const r of rows) {
    if (typeof r.id !== 'string') throw new Error(`int8 arrived as ${typeof r.id}`);
    const id = BigInt(r.id);
    const d = lib.decode(r.id);
    if (d.shard !== r.shard || d.seq !== r.seq || d.ms !== BigInt(r.ms)) decode++;
    if (lib.toShortcode(id) !== r.shortcode || lib.fromShortcode(r.shortcode) !== id) shortcode++;
    if (publicIds.toPublic(id) !== r.public_id) pub++;
    if (publicIds.toPrivate(r.public_id) !== id) priv++;
    const back = lib.parse(lib.stringify({ id, n: 1 }), { ids: ['id'] });
    if (back.id !== id) json++;
    if (BigInt(Number(r.id)) !== id) rounded++;
  }
  // the server reads back what the library wrote: the ID as a string
  const text = lib.stringify({ id: BigInt(rows[rows.length - 1].id) });
  const { rows: found } = await client.query(
    "SELECT count(*)::int AS n FROM items WHERE id = ($1::json ->> 'id')::bigint", [text]);
  console.log(`rows=${rows.length}`);
  console.log(`decode_mismatches=${decode}`);
  console.log(`shortcode_mismatches=${shortcode}`);
  console.log(`public_mismatches=${pub}`);
  console.log(`private_mismatches=${priv}`);
  console.log(`json_mismatches=${json}`);
  console.log(`number_rounded=${rounded}`);
  console.log(`json_found=${found[0].n}`);
} finally {
  await client.end();
}
