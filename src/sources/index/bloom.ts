/**
 * Block `logsBloom`s: which addresses and topics a block's logs may hold, and the bloom a list of logs makes.
 *
 * A header's bloom is the OR of one 2048-bit filter per log item (the log's address and each topic): for each
 * item, three 11-bit slices of its Keccak-256 hash name the bits set (Ethereum yellow paper, section 4.3.1). A
 * bit clear for an item proves the block holds no log with it; all three set only says it may. The bloom of every
 * log of a block, computed again from the logs a node answered, equals the header's exactly when the answer is
 * the block's whole log list.
 *
 * Keccak-256 is computed here (the original Keccak padding, not SHA3's, which is all Node's crypto offers): the
 * index command loads no Ethereum library, and the check hashes tens of thousands of items in a dense block.
 */

const BLOOM_HEX = 512;

/** Keccak-f[1600]'s round constants and rotation offsets, derived as the Keccak reference defines them. */
const ROUND_HI = new Uint32Array(24);
const ROUND_LO = new Uint32Array(24);
const ROTATION = new Uint8Array(25);
const PI = new Uint8Array(25);
/** χ's neighbours: lane (x + 1, y) and (x + 2, y). */
const NEXT = new Uint8Array(25);
const AFTER_NEXT = new Uint8Array(25);
{
  // Round constants: bit 2^j - 1 of round i is the LFSR x^8 + x^6 + x^5 + x^4 + 1 at step j + 7i.
  let lfsr = 1;
  const next = (): number => {
    const bit = lfsr & 1;
    lfsr = lfsr & 0x80 ? ((lfsr << 1) ^ 0x71) & 0xff : (lfsr << 1) & 0xff;
    return bit;
  };
  for (let round = 0; round < 24; round++) {
    for (let j = 0; j < 7; j++) {
      if (!next()) continue;
      const position = (1 << j) - 1;
      if (position < 32) ROUND_LO[round]! |= 1 << position;
      else ROUND_HI[round]! |= 1 << (position - 32);
    }
  }
  // Rotation offsets along the walk (1,0) → (y, 2x + 3y); π moves lane (x, y) to (y, 2x + 3y).
  let x = 1;
  let y = 0;
  for (let t = 0; t < 24; t++) {
    ROTATION[x + 5 * y] = (((t + 1) * (t + 2)) / 2) % 64;
    [x, y] = [y, (2 * x + 3 * y) % 5];
  }
  for (let lane = 0; lane < 25; lane++) {
    const lx = lane % 5;
    const ly = Math.floor(lane / 5);
    PI[lane] = ly + 5 * ((2 * lx + 3 * ly) % 5);
    NEXT[lane] = ((lx + 1) % 5) + 5 * ly;
    AFTER_NEXT[lane] = ((lx + 2) % 5) + 5 * ly;
  }
}

/** The permutation over 25 lanes held as 32-bit halves: `state[2i]` low, `state[2i + 1]` high. */
function permute(state: Uint32Array, b: Uint32Array, c: Uint32Array): void {
  for (let round = 0; round < 24; round++) {
    // θ
    for (let x = 0; x < 5; x++) {
      c[2 * x] = state[2 * x]! ^ state[2 * x + 10]! ^ state[2 * x + 20]! ^ state[2 * x + 30]! ^ state[2 * x + 40]!;
      c[2 * x + 1] =
        state[2 * x + 1]! ^ state[2 * x + 11]! ^ state[2 * x + 21]! ^ state[2 * x + 31]! ^ state[2 * x + 41]!;
    }
    for (let x = 0; x < 5; x++) {
      const left = (x + 4) % 5;
      const right = (x + 1) % 5;
      const rLo = c[2 * right]!;
      const rHi = c[2 * right + 1]!;
      const dLo = c[2 * left]! ^ ((rLo << 1) | (rHi >>> 31));
      const dHi = c[2 * left + 1]! ^ ((rHi << 1) | (rLo >>> 31));
      for (let y = 0; y < 25; y += 5) {
        state[2 * (x + y)]! ^= dLo;
        state[2 * (x + y) + 1]! ^= dHi;
      }
    }
    // ρ and π
    for (let lane = 0; lane < 25; lane++) {
      const lo = state[2 * lane]!;
      const hi = state[2 * lane + 1]!;
      const n = ROTATION[lane]!;
      const to = 2 * PI[lane]!;
      if (n === 0) {
        b[to] = lo;
        b[to + 1] = hi;
      } else if (n < 32) {
        b[to] = (lo << n) | (hi >>> (32 - n));
        b[to + 1] = (hi << n) | (lo >>> (32 - n));
      } else if (n === 32) {
        b[to] = hi;
        b[to + 1] = lo;
      } else {
        const m = n - 32;
        b[to] = (hi << m) | (lo >>> (32 - m));
        b[to + 1] = (lo << m) | (hi >>> (32 - m));
      }
    }
    // χ
    for (let lane = 0; lane < 25; lane++) {
      const at = 2 * lane;
      const one = 2 * NEXT[lane]!;
      const two = 2 * AFTER_NEXT[lane]!;
      state[at] = b[at]! ^ (~b[one]! & b[two]!);
      state[at + 1] = b[at + 1]! ^ (~b[one + 1]! & b[two + 1]!);
    }
    // ι
    state[0]! ^= ROUND_LO[round]!;
    state[1]! ^= ROUND_HI[round]!;
  }
}

const RATE = 136;
const scratch = { state: new Uint32Array(50), b: new Uint32Array(50), c: new Uint32Array(10) };

/** Keccak-256 of `input`. */
export function keccak256(input: Uint8Array): Uint8Array {
  const { state, b, c } = scratch;
  state.fill(0);
  // Byte i of a block goes to lane i / 8, little-endian: as 32-bit halves, word i / 4.
  let at = 0;
  for (; at + RATE <= input.length; at += RATE) {
    for (let i = 0; i < RATE; i++) state[i >> 2]! ^= input[at + i]! << (8 * (i & 3));
    permute(state, b, c);
  }
  const rest = input.length - at;
  for (let i = 0; i < rest; i++) state[i >> 2]! ^= input[at + i]! << (8 * (i & 3));
  state[rest >> 2]! ^= 0x01 << (8 * (rest & 3));
  state[(RATE - 1) >> 2]! ^= 0x80 << 24;
  permute(state, b, c);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = state[i >> 2]! >>> (8 * (i & 3));
  return out;
}

/** `0x…` hex as bytes; undefined when it is not even-length hex. */
export function hexBytes(hex: string): Uint8Array | undefined {
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(hex)) return undefined;
  return Uint8Array.from(Buffer.from(hex.slice(2), "hex"));
}

/** The three bloom bits (0-2047, counted from the bloom's last bit) of an address or topic. */
export type BloomBits = readonly [number, number, number];

export function bloomBits(item: string): BloomBits {
  const hash = keccak256(hexBytes(item.toLowerCase()) ?? new Uint8Array());
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
