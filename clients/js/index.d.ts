// Types of the shardid package (index.js).  IDs are bigint; functions that
// take an ID also accept a safe-integer number or a decimal string.

/** An ID argument: a bigint, a safe-integer number, or a decimal string. */
export type IdLike = bigint | number | string;
/** A time: a Date, or Unix milliseconds as a bigint or safe-integer number. */
export type TimeLike = Date | bigint | number;

export interface EpochOption {
  /** The epoch: a Date or Unix ms; default 2011-01-01T00:00:00Z. */
  epoch?: TimeLike | null;
}

export interface Decoded {
  /** Unix milliseconds of the ID's millisecond. */
  ms: bigint;
  /** The same as a Date (an invalid Date outside Date's range). */
  time: Date;
  /** Logical shard, 0 to 8191. */
  shard: number;
  /** Sequence field, 0 to 1023. */
  seq: number;
}

export type EncodeParts =
  | { ms: bigint | number; time?: undefined; shard: number | bigint; seq: number | bigint }
  | { time: Date; ms?: undefined; shard: number | bigint; seq: number | bigint };

/** A value the package refuses, as the extension refuses the same input;
 * sqlstate is the SQLSTATE it raises.  (A value of the wrong type is a
 * TypeError.) */
export class ShardidError extends Error {
  constructor(sqlstate: string, message: string, hint?: string);
  readonly sqlstate: string;
  readonly hint?: string;
}

export const SEQ_BITS: bigint;
export const SHARD_BITS: bigint;
export const MAX_SHARD: number;
export const MAX_SEQ: number;
export const MAX_TIME_MS: bigint;
export const MAX_ID: bigint;
export const DEFAULT_EPOCH_MS: bigint;
export const ALPHABET: string;

/** An ID's parts, as shardid_decode. */
export function decode(id: IdLike, options?: EpochOption): Decoded;
/** The ID of a time, shard and seq, as shardid_encode. */
export function encode(parts: EncodeParts, options?: EpochOption): bigint;
/** The smallest ID of time's millisecond, as shardid_floor. */
export function floor(time: TimeLike, options?: EpochOption): bigint;
/** The last millisecond that encodes to a positive ID, as shardid_horizon. */
export function horizon(options?: EpochOption): Date;
/** The same in Unix ms. */
export function horizonMs(options?: EpochOption): bigint;
/** The epoch in Unix ms, checked as the extension checks it. */
export function epochMs(epoch?: TimeLike | null): bigint;
/** Instagram's URL form of an ID, as shardid_to_shortcode. */
export function toShortcode(id: IdLike): string;
/** The ID of Instagram's URL form, as shardid_from_shortcode. */
export function fromShortcode(code: string): bigint;

/** Speck64/128 round keys of a 32-hex-digit key. */
export function expandKey(hex: string): Uint32Array;
/** One Speck64/128 encryption of a 64-bit block. */
export function encrypt(roundKeys: Uint32Array, block: bigint): bigint;
/** One Speck64/128 decryption of a 64-bit block. */
export function decrypt(roundKeys: Uint32Array, block: bigint): bigint;

export interface KeyInfo {
  version: number;
  /** 16 lowercase hex digits: E_k("shardid0"), never the key. */
  fingerprint: string;
  newest: boolean;
}

/** Opaque public IDs under a key list "1:hex32, 2:hex32", as the
 * extension's shardid_public/shardid_private under shardid.public_id_keys. */
export class PublicIds {
  constructor(keys?: string | null);
  toPublic(id: IdLike, version?: number): string;
  toPrivate(text: string): bigint;
  toPublicBigint(id: IdLike, version?: number): bigint;
  toPrivateBigint(c: IdLike, version?: number): bigint;
  fingerprints(): KeyInfo[];
}

export interface IdsOption {
  /** The keys whose values are IDs, at any depth; default ["id"]. */
  ids?: string[];
}

/** JSON.stringify with bigints and ID fields written as decimal strings. */
export function stringify(value: unknown, options?: IdsOption & { space?: string | number }): string;
/** JSON.parse with ID fields returned as exact bigints; every refusal is
 * a ShardidError (22P02 not JSON or not an ID, 22003 out of range, 54001
 * nested deeper than 1,000 levels). */
export function parse(text: string, options?: IdsOption): any;
