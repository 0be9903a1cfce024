/**
 * Block `logsBloom`s: which addresses and topics a block's logs may hold, and the bloom a list of logs makes.
 *
 * A header's bloom is the OR of one 2048-bit filter per log item (the log's address and each topic): for each
 * item, three 11-bit slices of its Keccak-256 hash name the bits set (Ethereum yellow paper, section 4.3.1). A
 * bit clear for an item proves the block holds no log with it; all three set only says it may. The bloom of every
 * log of a block, computed again from the logs a node answered, equals the header's exactly when the answer is
 * the block's whole log list.
 *
 * Keccak-256 is computed in keccak.ts: the index command loads no Ethereum library.
 */

import { keccak256, keccak256Hex } from "./keccak.js";

/** Keccak-256 itself, where the bloom is read (its property test imports it from here). */
export { keccak256 };

const BLOOM_HEX = 512;

/** The three bloom bits (0-2047, counted from the bloom's last bit) of an address or topic. */
export type BloomBits = readonly [number, number, number];

export function bloomBits(item: string): BloomBits {
  const hash = keccak256Hex(item) ?? keccak256(new Uint8Array());
  const bit = (i: number) => ((hash[i]! << 8) | hash[i + 1]!) & 0x7ff;
  return [bit(0), bit(2), bit(4)];
}

/** Whether a `0x`-prefixed 512-digit bloom has all three bits set. */
export function bloomHas(bloom: string, bits: BloomBits): boolean {
  for (const bit of bits) {
    // Bit n counts from the end: byte 255 - n/8, as two hex digits from position 2 + 2 × byte.
    const byte = 255 - (bit >> 3);
    const value = Number.parseInt(bloom.slice(2 + 2 * byte, 4 + 2 * byte), 16);
    if (!(value & (1 << (bit & 7)))) return false;
  }
  return true;
}

/** Whether `bloom` is a well-formed 2048-bit bloom. */
export function isBloom(bloom: unknown): bloom is string {
  return typeof bloom === "string" && bloom.length === 2 + BLOOM_HEX && /^0x[0-9a-fA-F]*$/.test(bloom);
}

/** Builds the bloom of a list of logs, hashing each distinct address and topic once. */
export class BloomBuilder {
  private readonly bytes = new Uint8Array(256);
  private readonly seen = new Set<string>();

  add(item: unknown): void {
    if (typeof item !== "string") return;
    const key = item.toLowerCase();
    if (this.seen.has(key)) return;
    this.seen.add(key);
    for (const bit of bloomBits(key)) this.bytes[255 - (bit >> 3)]! |= 1 << (bit & 7);
  }

  /** A log's address and topics (a node's answer: anything not a string adds nothing, and so fails the check). */
  addLog(log: { address?: unknown; topics?: unknown }): void {
    this.add(log.address);
    if (Array.isArray(log.topics)) for (const topic of log.topics) this.add(topic);
  }

  /** The bloom as a node writes it, lower case. */
  hex(): string {
    return `0x${Buffer.from(this.bytes).toString("hex")}`;
  }
}
