// Exact published values and the package's own rules (types, JSON, keys).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as shardid from '../index.js';
import {
  decode, encode, floor, horizon, horizonMs, toShortcode, fromShortcode,
  PublicIds, ShardidError, stringify, parse,
} from '../index.js';

const sqlstate = (code) => (e) => e instanceof ShardidError && e.sqlstate === code;

test('the published example: 2026-10-23 09:20:00 UTC, shard 1341, seq 1001', () => {
  const id = encode({ time: new Date('2026-10-23T09:20:00Z'), shard: 1341, seq: 1001 });
  assert.equal(id, 4185136929178974185n);
  assert.deepEqual(decode(id), {
    ms: 1792747200000n, time: new Date('2026-10-23T09:20:00.000Z'), shard: 1341, seq: 1001,
  });
  assert.equal(toShortcode(id), 'DoUl90AFPfp');
  assert.equal(fromShortcode('DoUl90AFPfp'), 4185136929178974185n);
  assert.equal(floor(new Date('2026-10-23T09:20:00Z')), 4185136929177600000n);
  // Twitter's epoch, as in the extension's regress test
  assert.equal(encode({ time: new Date('2026-10-23T09:20:00Z'), shard: 1341, seq: 1001 },
    { epoch: new Date('2010-11-04T01:42:54.657Z') }), 4227122124811466729n);
});

test('the horizon: 2045-11-03 19:53:47.775 UTC encodes to 2^63 - 1', () => {
  assert.equal(horizon().toISOString(), '2045-11-03T19:53:47.775Z');
  assert.equal(horizonMs(), 1293840000000n + 2n ** 40n - 1n);
  assert.equal(encode({ time: horizon(), shard: 8191, seq: 1023 }), 2n ** 63n - 1n);
  assert.equal(horizon({ epoch: new Date('2010-11-04T01:42:54.657Z') }).toISOString(), '2045-09-06T21:36:42.432Z');
  assert.throws(() => encode({ ms: horizonMs() + 1n, shard: 0, seq: 0 }), sqlstate('22008'));
});

test('epochs: Date, BigInt or safe integer ms; not finite or not whole ms is 22023', () => {
  const want = decode(1n, { epoch: 0n });
  assert.deepEqual(decode(1n, { epoch: 0 }), want);
  assert.deepEqual(decode(1n, { epoch: new Date(0) }), want);
  assert.equal(want.time.toISOString(), '1970-01-01T00:00:00.000Z');
  assert.throws(() => decode(1n, { epoch: 1.5 }), sqlstate('22023'));
  assert.throws(() => decode(1n, { epoch: Infinity }), sqlstate('22023'));
  assert.throws(() => decode(1n, { epoch: new Date(NaN) }), sqlstate('22023'));
  assert.throws(() => encode({ time: new Date(NaN), shard: 0, seq: 0 }), sqlstate('22008'));
  assert.throws(() => decode(1n, { epoch: 2 ** 60 }), sqlstate('22003'));
});

test('IDs: BigInt, safe integer Number or decimal string; never a rounded Number', () => {
  assert.equal(toShortcode(64), 'BA');
  assert.equal(toShortcode('4185136929178974185'), 'DoUl90AFPfp');
  assert.equal(toShortcode('0000000000000000000000004185136929178974185'), 'DoUl90AFPfp');
  // a value the extension would refuse too is a ShardidError with its SQLSTATE
  assert.throws(() => toShortcode(4185136929178974185), sqlstate('22003'));
  assert.throws(() => toShortcode(1.5), sqlstate('22P02'));
  assert.throws(() => toShortcode(NaN), sqlstate('22P02'));
  assert.throws(() => toShortcode('12a'), sqlstate('22P02'));
  assert.throws(() => toShortcode('9223372036854775808'), sqlstate('22003'));
  assert.throws(() => encode({ ms: 1792747200000n, shard: 1.5, seq: 0 }), sqlstate('22P02'));
  assert.throws(() => new PublicIds('1:000102030405060708090a0b0c0d0e0f').toPublic(1n, 1.5), sqlstate('22P02'));
  assert.throws(() => shardid.expandKey('00'), sqlstate('22023'));
  // a value of the wrong type is a TypeError
  assert.throws(() => toShortcode(null), TypeError);
  assert.throws(() => fromShortcode(1), TypeError);
  assert.throws(() => encode({ shard: 0, seq: 0 }), TypeError);
  assert.throws(() => encode({ ms: 0n, time: new Date(), shard: 0, seq: 0 }), TypeError);
  assert.throws(() => encode({ ms: 1792747200000n, shard: '1', seq: 0 }), TypeError);
});

test('a decimal string longer than any bigint is refused by its length, before BigInt', () => {
  // 5,000,000 digits: BigInt of that took 5 s; the refusal names the length
  const long = '9'.repeat(5_000_000);
  assert.throws(() => decode(long), (e) => e.sqlstate === '22003' && /of 5000000 digits is out of range/.test(e.message));
  assert.throws(() => decode(`-${long}`), (e) => e.sqlstate === '22003' && /of 5000000 digits/.test(e.message));
  assert.throws(() => parse(`{"id":"${long}"}`), (e) => e.sqlstate === '22003' && /of 5000000 digits/.test(e.message));
  assert.throws(() => parse(`{"id":${long}}`), (e) => e.sqlstate === '22003' && /above 2\^53 - 1/.test(e.message));
  // the message quotes at most 40 characters of it
  assert.throws(() => parse(`{"id":"x${long}"}`), (e) => e.sqlstate === '22P02' && e.message.length < 200);
  // 20 digits is one too many; 19 with leading zeros is still a bigint
  assert.throws(() => decode('10000000000000000000'), (e) => /of 20 digits/.test(e.message));
  assert.equal(toShortcode(`${'0'.repeat(30)}64`), 'BA');
});

test('shortcodes: errors say which byte is wrong', () => {
  assert.throws(() => fromShortcode('DoUl\u00e9x'), /byte 5 is not one of/);
  assert.throws(() => fromShortcode('\u{1F600}A'), /byte 1 is not one of/);
  assert.throws(() => fromShortcode('AB'), /leading "A"/);
  assert.equal(fromShortcode('H__________'), 2n ** 63n - 1n);
});

test('shortcodes: a long input is refused by its length before it is read, its message cut', () => {
  // a flat string, as one read from the network is; its last character is
  // not a digit: were the input read before its length was checked, that
  // character would be the error (22P02, byte N), not the length
  const big = Buffer.from(`\u00e9${'A'.repeat(50 * 1024 * 1024)}!`, 'utf8').toString('utf8');
  let err;
  try {
    fromShortcode(big);
  } catch (e) {
    err = e;
  }
  assert.equal(err.sqlstate, '22003');
  assert.ok(err.message.length < 200);
  assert.match(err.message, /shortcode "\u00e9AAAAAAAAA\.\.\." is too long/);
  assert.throws(() => fromShortcode('BBBBBBBBBBBB!'), (e) => e.sqlstate === '22003');
  // 11 characters, 12 bytes: too long, as the server has it
  assert.throws(() => fromShortcode('DoUl90AFPf\u00e9'), (e) => e.sqlstate === '22003');
});

test('Speck64/128 published vector: key 1b1a1918 13121110 0b0a0908 03020100', () => {
  const rk = shardid.expandKey('1b1a1918131211100b0a090803020100');
  assert.equal(shardid.encrypt(rk, 0x3b7265747475432dn), 0x8c6fa548454e028bn);
  assert.equal(shardid.decrypt(rk, 0x8c6fa548454e028bn), 0x3b7265747475432dn);
  // upper-case hex is the same key
  assert.deepEqual(shardid.expandKey('1B1A1918131211100B0A090803020100'), rk);
});

test('public IDs: form, round trips, rotation', () => {
  const p = new PublicIds('1:000102030405060708090a0b0c0d0e0f, 2:0f0e0d0c0b0a09080706050403020100');
  const seen = new Set();
  let x = 0x9e3779b97f4a7c15n;
  for (let i = 0; i < 2000; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & (2n ** 64n - 1n);
    const id = x >> 1n;
    const text = p.toPublic(id);
    assert.match(text, /^C[A-H][A-Za-z0-9_-]{10}$/);
    assert.equal(p.toPrivate(text), id);
    assert.ok(p.toPublicBigint(id, 1) < 2n ** 63n);
    seen.add(text);
  }
  assert.equal(seen.size, 2000);
  // rotation: an ID minted under 1 still decodes with 1 and 2 configured,
  // and not once 1 is removed
  const v1 = new PublicIds('1:000102030405060708090a0b0c0d0e0f').toPublic(42n);
  assert.equal(v1[0], 'B');
  assert.equal(p.toPrivate(v1), 42n);
  const only2 = new PublicIds('2:0f0e0d0c0b0a09080706050403020100');
  assert.throws(() => only2.toPrivate(v1), (e) => e.sqlstate === '22P02' && /key version 1 is not configured/.test(e.message));
  assert.deepEqual(only2.fingerprints().map((f) => f.newest), [true]);
});

test('public IDs: bad key lists are 55000 and never show the key; no keys is 55000', () => {
  const key = '000102030405060708090a0b0c0d0e0f';
  for (const bad of [`64:${key}`, `-1:${key}`, `1:${key}, 1:${key}`, `1:${key.slice(1)}`, `1:${key}0`,
    `1:${key.replace('0', 'g')}`, `1 ${key}`, `1:${key},`, `x:${key}`, `1:${key}, ,2:${key}`, `100:${key}`, '\u00a0']) {
    assert.throws(() => new PublicIds(bad), (e) => e.sqlstate === '55000' && !e.message.includes(key.slice(4)), bad);
  }
  assert.deepEqual(new PublicIds(` 0:${key} ,\t63:${key.toUpperCase()} `).fingerprints().map((f) => f.version), [0, 63]);
  for (const none of [undefined, null, '', '  ']) {
    const p = new PublicIds(none);
    assert.throws(() => p.toPublic(1n), (e) => e.sqlstate === '55000' && /shardid\.public_id_keys/.test(e.message));
    assert.throws(() => p.toPrivate('BAAAAAAAAAAA'), sqlstate('55000'));
    assert.deepEqual(p.fingerprints(), []);
  }
  assert.throws(() => new PublicIds(42), TypeError);
});

test('stringify: BigInt as decimal strings, unsafe Numbers in ID fields refused', () => {
  assert.equal(stringify({ id: 4185136929178974185n, n: 1.5, tags: ['a'], at: new Date(0) }),
    '{"id":"4185136929178974185","n":1.5,"tags":["a"],"at":"1970-01-01T00:00:00.000Z"}');
  assert.equal(stringify([{ id: 5 }, { id: null }, { big: 2n ** 63n - 1n }]),
    '[{"id":"5"},{"id":null},{"big":"9223372036854775807"}]');
  assert.equal(stringify({ post_id: [1n, 2] }, { ids: ['post_id'] }), '{"post_id":["1","2"]}');
  assert.throws(() => stringify({ id: 4185136929178974185 }), (e) => e.sqlstate === '22003' && /not a safe integer/.test(e.message));
  assert.throws(() => stringify({ id: 1.5 }), sqlstate('22P02'));
  assert.throws(() => stringify({ a: { id: 2 ** 53 } }), sqlstate('22003'));
  assert.throws(() => stringify({ id: true }), TypeError);
  assert.equal(stringify({ id: 2 ** 53 - 1 }), '{"id":"9007199254740991"}');
  assert.equal(stringify({ id: 1n }, { space: 1 }), '{\n "id": "1"\n}');
});

test('parse: ID fields as exact BigInt from the text, never through a Number', () => {
  assert.deepEqual(parse('{"id":"4185136929178974185","n":4185136929178974185,"x":{"id":"9223372036854775807"}}'),
    { id: 4185136929178974185n, n: 4185136929178974185, x: { id: 9223372036854775807n } });
  assert.deepEqual(parse(' [ {"id": 12}, {"id": null}, {"post": "7"} ] ', { ids: ['id', 'post'] }),
    [{ id: 12n }, { id: null }, { post: 7n }]);
  assert.deepEqual(parse('{"ids":["1","2"]}', { ids: ['ids'] }), { ids: [1n, 2n] });
  assert.deepEqual(parse('{"s":"a\\"b\\\\","id":"1","e":[],"o":{},"t":true,"f":false,"z":-0.5e-3}'),
    { s: 'a"b\\', id: 1n, e: [], o: {}, t: true, f: false, z: -0.0005 });
  const proto = parse('{"__proto__":{"id":"1"}}');
  assert.deepEqual(Object.keys(proto), ['__proto__']);
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  // every refusal is a ShardidError, with the SQLSTATE Python's loads gives
  // (test/vectors/vectors.json's client_errors hold the cases both check)
  assert.throws(() => parse('{"id":9007199254740993}'), (e) => e.sqlstate === '22003' && /above 2\^53 - 1/.test(e.message));
  assert.throws(() => parse('{"id":4185136929178974185}'), sqlstate('22003'));
  assert.throws(() => parse('{"id":1.5}'), sqlstate('22P02'));
  assert.throws(() => parse('{"id":1e3}'), sqlstate('22P02'));
  assert.throws(() => parse('{"id":"01"}'), sqlstate('22P02'));
  assert.throws(() => parse('{"id":"x"}'), sqlstate('22P02'));
  assert.throws(() => parse('{"id":true}'), sqlstate('22P02'));
  assert.throws(() => parse('{"id":"-1"}'), sqlstate('22003'));
  assert.throws(() => parse('{"id":"9223372036854775808"}'), sqlstate('22003'));
  for (const bad of ['', '{', '{"a" 1}', '[1,]', '{"a":1,}', '"abc', '01', 'nul', '{} x', '-', '{"a":"\t"}', 'NaN']) {
    assert.throws(() => parse(bad), (e) => e.sqlstate === '22P02' && /invalid input syntax for type json/.test(e.message), bad);
  }
  // nested deeper than 1,000 levels: 54001, not a stack overflow
  assert.throws(() => parse('['.repeat(100000) + ']'.repeat(100000)), sqlstate('54001'));
  assert.deepEqual(parse('['.repeat(1000) + ']'.repeat(1000)), JSON.parse('['.repeat(1000) + ']'.repeat(1000)));
  // a long number outside an ID field reads as JSON.parse reads it
  assert.equal(parse(`{"n":1${'0'.repeat(5000)}}`).n, Infinity);
  // whatever JSON.parse reads, parse reads the same outside ID fields
  const doc = '{"a":[1,2.5,-3e2,"\\u00e9\\n",null,true],"b":{"c":{}}}';
  assert.deepEqual(parse(doc), JSON.parse(doc));
});
