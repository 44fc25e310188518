// Every vector of test/vectors/vectors.json (made from the extension by
// test/vectors/generate.py) against this package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as shardid from '../index.js';

const V = JSON.parse(readFileSync(new URL('../../../test/vectors/vectors.json', import.meta.url), 'utf8'));
const epochOpt = (e) => (e === null || e === undefined ? {} : { epoch: BigInt(e) });

test('the vectors file has every section', () => {
  for (const k of ['decode', 'encode', 'floor', 'horizon', 'shortcode', 'errors', 'client_errors']) {
    assert.ok(V[k].length > 0, k);
  }
  assert.equal(V.default_epoch_ms, String(shardid.DEFAULT_EPOCH_MS));
  assert.ok(V.public_ids.ids.length > 0 && V.public_ids.errors.length > 0);
});

test(`decode: ${V.decode.length} vectors`, () => {
  for (const v of V.decode) {
    const d = shardid.decode(BigInt(v.id), epochOpt(v.epoch_ms));
    const what = JSON.stringify(v);
    assert.equal(d.ms, BigInt(v.ms), what);
    assert.equal(d.shard, v.shard, what);
    assert.equal(d.seq, v.seq, what);
    if (v.time !== null) assert.equal(d.time.toISOString(), v.time, what);
    // the ID, taken apart and put back together
    assert.equal(shardid.encode({ ms: d.ms, shard: d.shard, seq: d.seq }, epochOpt(v.epoch_ms)), BigInt(v.id), what);
  }
});

test(`encode: ${V.encode.length} vectors`, () => {
  for (const v of V.encode) {
    const what = JSON.stringify(v);
    assert.equal(shardid.encode({ ms: BigInt(v.ms), shard: v.shard, seq: v.seq }, epochOpt(v.epoch_ms)), BigInt(v.id), what);
    // and with a Date where one can hold the time
    const t = new Date(Number(v.ms));
    if (!Number.isNaN(t.getTime())) {
      assert.equal(shardid.encode({ time: t, shard: v.shard, seq: v.seq }, epochOpt(v.epoch_ms)), BigInt(v.id), what);
    }
  }
});

test(`floor: ${V.floor.length} vectors`, () => {
  for (const v of V.floor) {
    assert.equal(shardid.floor(BigInt(v.ms), epochOpt(v.epoch_ms)), BigInt(v.id), JSON.stringify(v));
  }
});

test(`horizon: ${V.horizon.length} vectors`, () => {
  for (const v of V.horizon) {
    assert.equal(shardid.horizonMs(epochOpt(v.epoch_ms)), BigInt(v.ms), JSON.stringify(v));
    if (v.time !== null) assert.equal(shardid.horizon(epochOpt(v.epoch_ms)).toISOString(), v.time);
  }
});

test(`shortcode: ${V.shortcode.length} vectors`, () => {
  for (const v of V.shortcode) {
    assert.equal(shardid.toShortcode(BigInt(v.id)), v.code, v.id);
    assert.equal(shardid.fromShortcode(v.code), BigInt(v.id), v.code);
  }
});

const big = (x) => (x === undefined ? undefined : BigInt(x));

function call(fn, a, p) {
  switch (fn) {
    case 'decode': return shardid.decode(big(a.id), epochOpt(a.epoch_ms));
    case 'encode': return shardid.encode({ ms: big(a.ms), shard: a.shard, seq: a.seq }, epochOpt(a.epoch_ms));
    case 'floor': return shardid.floor(big(a.ms), epochOpt(a.epoch_ms));
    case 'horizon': return shardid.horizonMs(epochOpt(a.epoch_ms));
    case 'to_shortcode': return shardid.toShortcode(big(a.id));
    case 'from_shortcode': return shardid.fromShortcode(a.code);
    case 'to_public': return p.toPublic(big(a.id), a.version);
    case 'to_private': return p.toPrivate(a.text);
    case 'to_public_bigint': return p.toPublicBigint(big(a.id), a.version);
    case 'to_private_bigint': return p.toPrivateBigint(big(a.c), a.version);
    case 'json_parse': return shardid.parse(a.text.map(([piece, times]) => piece.repeat(times)).join(''), { ids: a.ids });
    default: throw new Error(`unknown function ${fn} in the vectors`);
  }
}

function checkErrors(cases, p) {
  for (const v of cases) {
    assert.throws(() => call(v.fn, v.args, p),
      (e) => {
        assert.ok(e instanceof shardid.ShardidError, `${v.fn}(${JSON.stringify(v.args)}): ${e}`);
        assert.equal(e.sqlstate, v.sqlstate, `${v.fn}(${JSON.stringify(v.args)}): ${e.message}`);
        return true;
      });
  }
}

test(`errors: ${V.errors.length} refused inputs, each with the extension's SQLSTATE`, () => {
  checkErrors(V.errors, null);
});

test(`client_errors: ${V.client_errors.length} refusals of parse, each with the same SQLSTATE as Python's loads`, () => {
  checkErrors(V.client_errors, null);
});

test('Speck64/128: the published vector', () => {
  const rk = shardid.expandKey(V.speck.key);
  assert.equal(shardid.encrypt(rk, BigInt('0x' + V.speck.plaintext)), BigInt('0x' + V.speck.ciphertext));
  assert.equal(shardid.decrypt(rk, BigInt('0x' + V.speck.ciphertext)), BigInt('0x' + V.speck.plaintext));
});

test(`public IDs: ${V.public_ids.ids.length} IDs under the test keys (from the ${V.public_ids.source.split(':')[0]})`, () => {
  const p = new shardid.PublicIds(V.public_ids.keys);
  assert.deepEqual(p.fingerprints(), V.public_ids.fingerprints);
  for (const v of V.public_ids.ids) {
    const id = BigInt(v.id);
    for (const version of [1, 2]) {
      const e = v[`v${version}`];
      assert.equal(p.toPublic(id, version), e.text, v.id);
      assert.equal(p.toPrivate(e.text), id, e.text);
      assert.equal(p.toPublicBigint(id, version), BigInt(e.bigint), v.id);
      assert.equal(p.toPrivateBigint(BigInt(e.bigint), version), id, v.id);
    }
    assert.equal(p.toPublic(id), v.newest, v.id);
  }
});

test(`public IDs: ${V.public_ids.errors.length} refused inputs`, () => {
  checkErrors(V.public_ids.errors, new shardid.PublicIds(V.public_ids.keys));
});
