// shardid: decode, encode and publish shardid's 64-bit IDs in JavaScript.
//
// The same rules as the PostgreSQL extension shardid, bit for bit, with
// BigInt throughout: an ID is (ms since the epoch << 23) | (shard << 10) |
// seq, a non-negative signed 64-bit integer.  Every refused value throws a
// ShardidError whose `sqlstate` is the SQLSTATE the extension raises for the
// same input (a value of the wrong JavaScript type throws a TypeError).

export const SEQ_BITS = 10n;
export const SHARD_BITS = 13n;
const TIME_SHIFT = SEQ_BITS + SHARD_BITS;
export const MAX_SHARD = 8191;
export const MAX_SEQ = 1023;
export const MAX_TIME_MS = (1n << 40n) - 1n;
export const MAX_ID = (1n << 63n) - 1n;
export const DEFAULT_EPOCH_MS = 1293840000000n; // 2011-01-01 00:00:00 UTC
// PostgreSQL's timestamp range in Unix ms: an epoch's horizon lies inside.
const PG_MIN_UNIX_MS = -210866803200000n;
const PG_END_UNIX_MS = 9224318016000000n;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGIT = new Map([...ALPHABET].map((c, i) => [c, i]));

/** The error for an input the extension refuses too. */
export class ShardidError extends Error {
  constructor(sqlstate, message, hint) {
    super(hint === undefined ? message : `${message} (hint: ${hint})`);
    this.name = 'ShardidError';
    this.sqlstate = sqlstate;
    this.hint = hint;
  }
}

// The most characters of a refused input that a message quotes.
const QUOTED = 40;
const quote = (s) => (s.length > QUOTED ? `${s.slice(0, QUOTED)}... (${s.length} characters)` : s);
// Digits an int8 can have: 9223372036854775807.
const INT8_DIGITS = 19;

function isoMs(ms) {
  const d = new Date(Number(ms));
  return Number.isNaN(d.getTime()) ? `${ms} ms after 1970-01-01` : d.toISOString();
}

// A Number that is not a safe integer: 22P02 if it is no integer at all,
// 22003 if it is one past 2^53 - 1 (it may have been rounded already).
// `what` says what held it ("ID 4185136929178974000").
function unsafeNumber(v, what) {
  if (!Number.isInteger(v)) return new ShardidError('22P02', `${what} is not an integer`);
  return new ShardidError('22003', `${what} is not a safe integer`,
    'pass it as a BigInt or a decimal string: a Number past 2^53 - 1 may have been rounded already');
}

// A decimal string as BigInt, refused by its length (before BigInt, whose
// cost grows with the square of the length) when no int8 is that long.
function decimalBig(text, what) {
  const digits = text.length - (text[0] === '-' ? 1 : 0);
  if (digits > INT8_DIGITS && text.replace(/^-?0*/, '').length > INT8_DIGITS) {
    throw new ShardidError('22003', `${what} of ${digits} digits is out of range for type bigint`,
      `a bigint has at most ${INT8_DIGITS} digits`);
  }
  return BigInt(text);
}

// An integer argument as BigInt: a BigInt, a Number that is a safe
// integer, or a decimal string.
function toBig(v, what) {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw unsafeNumber(v, `${what} ${v}`);
    return BigInt(v);
  }
  if (typeof v === 'string') {
    if (!/^-?[0-9]+$/.test(v)) {
      throw new ShardidError('22P02', `invalid input syntax for type bigint: "${quote(v)}"`, `${what} is a decimal integer`);
    }
    return decimalBig(v, what);
  }
  throw new TypeError(`${what} is a BigInt, a safe integer Number or a decimal string, not ${typeof v}`);
}

function timeMs(t, what = 'time') {
  if (t instanceof Date) {
    const n = t.getTime();
    if (Number.isNaN(n)) throw new ShardidError('22008', `${what} is not finite`, 'IDs encode finite times only');
    return BigInt(n);
  }
  return toBig(t, what);
}

/** The epoch in Unix ms as a BigInt, checked as the extension checks it. */
export function epochMs(epoch) {
  let ms;
  if (epoch === undefined || epoch === null) return DEFAULT_EPOCH_MS;
  if (epoch instanceof Date) {
    const n = epoch.getTime();
    if (Number.isNaN(n)) throw new ShardidError('22023', 'epoch is not finite', 'the epoch must be a finite timestamp');
    ms = BigInt(n);
  } else if (typeof epoch === 'number' && !Number.isInteger(epoch)) {
    if (!Number.isFinite(epoch)) throw new ShardidError('22023', `epoch ${epoch} is not finite`, 'the epoch must be a finite timestamp');
    throw new ShardidError('22023', `epoch ${epoch} is not a whole millisecond`, 'IDs count whole milliseconds since the epoch');
  } else {
    ms = toBig(epoch, 'epoch');
  }
  if (ms < PG_MIN_UNIX_MS || ms + MAX_TIME_MS >= PG_END_UNIX_MS) {
    throw new ShardidError('22008', `epoch ${ms} ms is out of range`,
      `the epoch's horizon, ${MAX_TIME_MS} ms later, must be a valid PostgreSQL timestamp`);
  }
  return ms;
}

function checkId(id, what = 'ID') {
  const v = toBig(id, what);
  if (v < 0n) throw new ShardidError('22023', `${what} ${v} is negative`, 'IDs made by shardid are never negative: bit 63 is always 0');
  if (v > MAX_ID) throw new ShardidError('22003', `value ${v} is out of range for type bigint`);
  return v;
}

function int4(v, what) {
  if (typeof v === 'bigint') {
    if (v < -(2n ** 31n) || v >= 2n ** 31n) throw new ShardidError('22003', `value ${v} is out of range for type integer`);
    return Number(v);
  }
  if (typeof v !== 'number') throw new TypeError(`${what} is an integer, not ${typeof v}`);
  if (!Number.isInteger(v)) throw new ShardidError('22P02', `${what} ${v} is not an integer`);
  if (v < -(2 ** 31) || v >= 2 ** 31) throw new ShardidError('22003', `value ${v} is out of range for type integer`);
  return v;
}

function compose(ms, epoch, shard, seq) {
  if (shard < 0 || shard > MAX_SHARD) {
    throw new ShardidError('22003', `shard ID ${shard} is out of range`, `valid shard IDs are 0 to ${MAX_SHARD}`);
  }
  if (seq < 0 || seq > MAX_SEQ) {
    throw new ShardidError('22003', `sequence number ${seq} is out of range`, `valid sequence numbers are 0 to ${MAX_SEQ}`);
  }
  if (ms < epoch) throw new ShardidError('22008', `time ${isoMs(ms)} is before the epoch ${isoMs(epoch)}`);
  if (ms - epoch > MAX_TIME_MS) {
    throw new ShardidError('22008', `time ${isoMs(ms)} is past the horizon of the epoch`,
      `with the epoch ${isoMs(epoch)}, the last millisecond that encodes to a positive bigint is ${isoMs(epoch + MAX_TIME_MS)}; use a later epoch`);
  }
  return ((ms - epoch) << TIME_SHIFT) | (BigInt(shard) << SEQ_BITS) | BigInt(seq);
}

/** The ID of {ms or time, shard, seq}: shardid_encode. */
export function encode({ ms, time, shard, seq } = {}, { epoch } = {}) {
  if ((ms === undefined) === (time === undefined)) throw new TypeError('encode takes one of ms and time');
  const t = timeMs(ms === undefined ? time : ms);
  const s = int4(shard, 'shard');
  const q = int4(seq, 'seq');
  return compose(t, epochMs(epoch), s, q);
}

/** An ID's parts: { ms (BigInt Unix ms), time (Date), shard, seq }: shardid_decode. */
export function decode(id, { epoch } = {}) {
  const v = checkId(id);
  const ms = epochMs(epoch) + (v >> TIME_SHIFT);
  return {
    ms,
    time: new Date(Number(ms)),
    shard: Number((v >> SEQ_BITS) & 8191n),
    seq: Number(v & 1023n),
  };
}

/** The smallest ID any shard can issue in time's millisecond: shardid_floor. */
export function floor(time, { epoch } = {}) {
  return compose(timeMs(time), epochMs(epoch), 0, 0);
}

/** The last millisecond (BigInt Unix ms) that encodes to a positive ID. */
export function horizonMs({ epoch } = {}) {
  return epochMs(epoch) + MAX_TIME_MS;
}

/** The last millisecond that encodes to a positive ID, as a Date:
 * shardid_horizon; 2045-11-03T19:53:47.775Z with the default epoch. */
export function horizon({ epoch } = {}) {
  return new Date(Number(horizonMs({ epoch })));
}

/** Instagram's URL form of an ID: shardid_to_shortcode. */
export function toShortcode(id) {
  let v = checkId(id);
  let out = '';
  do {
    out = ALPHABET[Number(v & 63n)] + out;
    v >>= 6n;
  } while (v !== 0n);
  return out;
}

/** The ID (BigInt) of Instagram's URL form: shardid_from_shortcode. */
export function fromShortcode(code) {
  if (typeof code !== 'string') throw new TypeError(`a shortcode is a string, not ${typeof code}`);
  if (code === '') throw new ShardidError('22P02', 'shortcode is empty', 'a shortcode has 1 to 11 characters');
  // The length first, in UTF-8 bytes as the server counts it (more UTF-16
  // units than that are more bytes too): no work in proportion to a long
  // input, and only its first bytes in the message.
  const head = Buffer.from(code.slice(0, 12), 'utf8');
  if (code.length > 11 || head.length > 11) {
    const shown = new TextDecoder('utf-8', { fatal: false }).decode(head.subarray(0, 11)).replace(/\uFFFD$/, '');
    throw new ShardidError('22003', `shortcode "${shown}..." is too long`, 'a shortcode has at most 11 characters');
  }
  let i = 0;
  for (const c of code) {
    if (!DIGIT.has(c)) {
      const pos = Buffer.byteLength(code.slice(0, i), 'utf8') + 1;
      throw new ShardidError('22P02', `invalid character in shortcode "${code}"`,
        `byte ${pos} is not one of A-Z, a-z, 0-9, "-" and "_"`);
    }
    i += c.length;
  }
  if (code.length > 1 && code[0] === 'A') {
    throw new ShardidError('22P02', `shortcode "${code}" has a leading "A"`,
      '"A" is the digit zero; shortcodes are written without leading zeros');
  }
  let v = 0n;
  for (const c of code) v = (v << 6n) | BigInt(DIGIT.get(c));
  if (v > MAX_ID) {
    throw new ShardidError('22003', `shortcode "${code}" is out of range`,
      'shortcodes stand for IDs of at most 63 bits; the largest is "H__________"');
  }
  return v;
}

// ---- Opaque public IDs: Speck64/128 with cycle walking (the shared spec).

const ROUNDS = 27;
const LIMIT = 1n << 63n;
const FINGERPRINT_BLOCK = 0x7368617264696430n; // "shardid0"
const SETTING = 'shardid.public_id_keys';

const ror = (x, r) => ((x >>> r) | (x << (32 - r))) >>> 0;
const rol = (x, r) => ((x << r) | (x >>> (32 - r))) >>> 0;

/** The 27 round keys (Uint32Array) of a key of 32 hex digits. */
export function expandKey(hex) {
  if (typeof hex !== 'string') throw new TypeError(`a key is a string of 32 hex digits, not ${typeof hex}`);
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new ShardidError('22023', 'a key is 32 hex digits');
  const w = [0, 8, 16, 24].map((i) => parseInt(hex.slice(i, i + 8), 16));
  const [l2, l1, l0, k0] = w;
  const k = new Uint32Array(ROUNDS);
  const l = [l0, l1, l2];
  k[0] = k0;
  for (let i = 0; i < ROUNDS - 1; i++) {
    l.push((((k[i] + ror(l[i], 8)) >>> 0) ^ i) >>> 0);
    k[i + 1] = (rol(k[i], 3) ^ l[i + 3]) >>> 0;
  }
  return k;
}

/** One Speck64/128 encryption of the 64-bit block v (BigInt). */
export function encrypt(rk, v) {
  let x = Number(v >> 32n);
  let y = Number(v & 0xffffffffn);
  for (let i = 0; i < ROUNDS; i++) {
    x = (((ror(x, 8) + y) >>> 0) ^ rk[i]) >>> 0;
    y = (rol(y, 3) ^ x) >>> 0;
  }
  return (BigInt(x) << 32n) | BigInt(y);
}

/** One Speck64/128 decryption of the 64-bit block v (BigInt). */
export function decrypt(rk, v) {
  let x = Number(v >> 32n);
  let y = Number(v & 0xffffffffn);
  for (let i = ROUNDS - 1; i >= 0; i--) {
    y = ror((y ^ x) >>> 0, 3);
    x = rol((((x ^ rk[i]) >>> 0) - y) >>> 0, 8);
  }
  return (BigInt(x) << 32n) | BigInt(y);
}

function permute(rk, v) {
  let c = encrypt(rk, v);
  while (c >= LIMIT) c = encrypt(rk, c);
  return c;
}

function unpermute(rk, c) {
  let v = decrypt(rk, c);
  while (v >= LIMIT) v = decrypt(rk, v);
  return v;
}

function invalidKeys(n, why) {
  return new ShardidError('55000', `invalid value of "${SETTING}": entry ${n} ${why}`,
    'the keys are a list "VERSION:HEX32, ..." with versions 0 to 63, each once');
}

/** Public IDs under a key list "1:hex32, 2:hex32", as the extension's
 * shardid_public and shardid_private under shardid.public_id_keys. */
export class PublicIds {
  #keys = new Map();
  #newest = null;

  constructor(keys) {
    if (keys !== undefined && keys !== null && typeof keys !== 'string') {
      throw new TypeError('the keys are a string: "VERSION:HEX32, ..."');
    }
    const text = keys ?? '';
    if (text.replace(/[ \t\n\r]/g, '') === '') return;
    text.split(',').forEach((raw, idx) => {
      const n = idx + 1;
      const item = raw.replace(/^[ \t\n\r]+|[ \t\n\r]+$/g, '');
      const colon = item.indexOf(':');
      if (colon < 0) throw invalidKeys(n, 'is not "VERSION:KEY"');
      const version = item.slice(0, colon);
      const key = item.slice(colon + 1);
      if (!/^[0-9]{1,2}$/.test(version) || Number(version) > 63) throw invalidKeys(n, 'has a version that is not 0 to 63');
      if (!/^[0-9a-fA-F]{32}$/.test(key)) throw invalidKeys(n, 'has a key that is not 32 hex digits');
      const v = Number(version);
      if (this.#keys.has(v)) throw invalidKeys(n, `repeats version ${v}`);
      this.#keys.set(v, expandKey(key));
    });
    this.#newest = Math.max(...this.#keys.keys());
  }

  #requireKeys() {
    if (this.#keys.size === 0) {
      throw new ShardidError('55000', 'no public ID keys are configured', `set "${SETTING}" to "VERSION:HEX32, ..."`);
    }
  }

  #version(version) {
    this.#requireKeys();
    if (version === undefined || version === null) return this.#newest;
    if (typeof version !== 'number') throw new TypeError(`a key version is an integer, not ${typeof version}`);
    if (!Number.isInteger(version)) throw new ShardidError('22P02', `key version ${version} is not an integer`);
    if (!this.#keys.has(version)) throw new ShardidError('22023', `key version ${version} is not configured`);
    return version;
  }

  /** P(id) under the key of version (default: the newest), a BigInt. */
  toPublicBigint(id, version) {
    const v = this.#version(version);
    return permute(this.#keys.get(v), checkId(id));
  }

  /** Q(c), the inverse of toPublicBigint, a BigInt. */
  toPrivateBigint(c, version) {
    const v = this.#version(version);
    return unpermute(this.#keys.get(v), checkId(c));
  }

  /** The 12-character public form of an ID (default: the newest key). */
  toPublic(id, version) {
    const v = this.#version(version);
    let c = permute(this.#keys.get(v), checkId(id));
    let digits = '';
    for (let i = 0; i < 11; i++) {
      digits = ALPHABET[Number(c & 63n)] + digits;
      c >>= 6n;
    }
    return ALPHABET[v] + digits;
  }

  /** The ID (BigInt) of a public form; ShardidError 22P02 for anything else. */
  toPrivate(text) {
    this.#requireKeys();
    if (typeof text !== 'string') throw new TypeError(`a public ID is a string, not ${typeof text}`);
    if (text.length !== 12 || ![...text].every((ch) => DIGIT.has(ch))) {
      throw new ShardidError('22P02', 'invalid public ID', 'a public ID is 12 characters of A-Z, a-z, 0-9, "-" and "_"');
    }
    const version = DIGIT.get(text[0]);
    if (!this.#keys.has(version)) throw new ShardidError('22P02', `invalid public ID: key version ${version} is not configured`);
    let c = 0n;
    for (const ch of text.slice(1)) c = (c << 6n) | BigInt(DIGIT.get(ch));
    if (c > MAX_ID) throw new ShardidError('22P02', 'invalid public ID');
    const id = unpermute(this.#keys.get(version), c);
    if (this.toPublic(id, version) !== text) throw new ShardidError('22P02', 'invalid public ID');
    return id;
  }

  /** [{ version, fingerprint, newest }] by version: each key's fingerprint
   * (16 hex digits of E_k("shardid0")), never the key. */
  fingerprints() {
    return [...this.#keys.keys()].sort((a, b) => a - b).map((v) => ({
      version: v,
      fingerprint: encrypt(this.#keys.get(v), FINGERPRINT_BLOCK).toString(16).padStart(16, '0'),
      newest: v === this.#newest,
    }));
  }
}

// ---- JSON that keeps IDs exact.

function idOut(key, v) {
  if (v === null || typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw unsafeNumber(v, `the Number ${v} in ID field "${key}"`);
    return String(v);
  }
  throw new TypeError(`ID field "${key}" holds a ${typeof v}, not an ID`);
}

function walkOut(value, ids) {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map((x) => walkOut(x, ids));
  if (value !== null && typeof value === 'object' && typeof value.toJSON !== 'function') {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      if (ids.has(k) && v !== undefined) out[k] = Array.isArray(v) ? v.map((x) => idOut(k, x)) : idOut(k, v);
      else out[k] = walkOut(v, ids);
    }
    return out;
  }
  return value;
}

/** JSON.stringify with every BigInt written as a decimal string, and the
 * values of the ID keys (default ["id"]) as decimal strings; a Number there
 * that is not a safe integer is refused (ShardidError 22003, or 22P02 if it
 * is no integer). */
export function stringify(value, { ids = ['id'], space } = {}) {
  return JSON.stringify(walkOut(value, new Set(ids)), null, space);
}

// A value under an ID key: a decimal string, or a bare number up to
// 2^53 - 1, as BigInt in 0 to 2^63 - 1; refused (22P02 not a decimal
// integer, 22003 out of range) by its text, and by its length before
// BigInt sees it.
function idIn(key, tok) {
  let text;
  if (tok.kind === 'null') return null;
  if (tok.kind === 'string') {
    if (!/^-?(0|[1-9][0-9]*)$/.test(tok.value)) {
      throw new ShardidError('22P02', `ID field "${key}" holds "${quote(tok.value)}", not a decimal integer`);
    }
    text = tok.value;
  } else if (tok.kind === 'number') {
    if (!/^-?(0|[1-9][0-9]*)$/.test(tok.src)) {
      throw new ShardidError('22P02', `ID field "${key}" holds the number ${quote(tok.src)}, not an integer`);
    }
    text = tok.src;
    // past 2^53 - 1 (16 digits or more) a reader may have rounded it
    if (text.replace(/^-/, '').length > 16 || BigInt(text) > SAFE || BigInt(text) < -SAFE) {
      throw new ShardidError('22003', `ID field "${key}" holds the bare number ${quote(text)}, above 2^53 - 1`,
        'a JSON reader may have rounded it: write IDs as strings');
    }
  } else {
    throw new ShardidError('22P02', `ID field "${key}" holds a ${tok.kind}, not an ID`);
  }
  const v = decimalBig(text, `ID field "${key}" holds a number`);
  if (v < 0n || v > MAX_ID) throw new ShardidError('22003', `ID field "${key}" holds ${v}, outside 0 to 2^63 - 1`);
  return v;
}

// JSON nested deeper than this is refused (54001, as PostgreSQL refuses
// JSON that exhausts its stack, and Python's json near its recursion
// limit), rather than exhausting the call stack.
const MAX_DEPTH = 1000;
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

/** JSON.parse that returns the values of the ID keys (default ["id"]:
 * decimal strings, or bare numbers up to 2^53 - 1) as BigInt, read from
 * the source text and never through a rounded Number. */
export function parse(text, { ids = ['id'] } = {}) {
  const idSet = new Set(ids);
  let i = 0;
  let depth = 0;
  const fail = (what) => {
    throw new ShardidError('22P02', `invalid input syntax for type json: ${what} at position ${i}`);
  };
  const deeper = () => {
    if (++depth > MAX_DEPTH) {
      throw new ShardidError('54001', `JSON nested deeper than ${MAX_DEPTH} levels at position ${i}`);
    }
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  // token: the value with its kind and, for numbers, its source text
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      deeper();
      const obj = {};
      ws();
      if (text[i] === '}') { i++; depth--; return { kind: 'object', value: obj }; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a string key');
        const key = string();
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        const tok = value();
        let v;
        if (idSet.has(key)) {
          v = tok.kind === 'array' ? tok.items.map((t) => idIn(key, t)) : idIn(key, tok);
        } else {
          v = tok.value;
        }
        Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; depth--; return { kind: 'object', value: obj }; }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      deeper();
      const items = [];
      ws();
      if (text[i] === ']') { i++; depth--; return { kind: 'array', value: [], items }; }
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; depth--; return { kind: 'array', value: items.map((t) => t.value), items }; }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') {
      const s = string();
      return { kind: 'string', value: s };
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      i += m[0].length;
      return { kind: 'number', value: Number(m[0]), src: m[0] };
    }
    for (const [lit, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return { kind: v === null ? 'null' : 'boolean', value: v };
      }
    }
    return fail('unexpected input');
  };
  const string = () => {
    // text[i] is '"': find the closing quote, let JSON.parse unescape
    let j = i + 1;
    while (j < text.length && text[j] !== '"') {
      if (text[j] === '\\') j++;
      j++;
    }
    if (j >= text.length) fail('unterminated string');
    let s;
    try {
      s = JSON.parse(text.slice(i, j + 1));
    } catch (e) {
      return fail(`invalid string (${e.message})`);
    }
    i = j + 1;
    return s;
  };
  if (typeof text !== 'string') throw new TypeError('parse takes a string');
  const tok = value();
  ws();
  if (i !== text.length) fail('unexpected input after the value');
  return tok.value;
}
