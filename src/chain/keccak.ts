/**
 * Keccak-256 (the original Keccak padding, not SHA3's, which is all Node's crypto offers), for the bloom checks of
 * the index: the index command loads no Ethereum library, and a dense block's check hashes thousands of items.
 *
 * The permutation is written out lane by lane over 32-bit halves held in local variables, generated from the
 * reference's rotation offsets and lane moves by scripts/keccak-permutation.ts (a test keeps the two equal): looped
 * over typed arrays, as it was first written, it took ~15 µs a hash, which made the at-cap check of a 10,000-log
 * block cost ~0.2 s; @noble/hashes' looped permutation measured 4-5× slower than this one (BENCHMARKS.md).
 */

/** Keccak-f[1600]'s round constants, derived as the Keccak reference defines them (an LFSR). */
const ROUND_HI = new Uint32Array(24);
const ROUND_LO = new Uint32Array(24);
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
}

/**
 * The permutation over 25 lanes held as 32-bit halves: `state[2i]` low, `state[2i + 1]` high. Each round: θ (the
 * column parities `c`, each lane xored with `d` of its column, into `a`), ρ and π (lane (x, y) rotated by its offset
 * and moved to (y, 2x + 3y), into `b`), χ (each lane with its two right-hand neighbours), ι (the round constant).
 *
 * Long on purpose: unrolled, with the 50 half-lanes in locals, by scripts/keccak-permutation.ts (a test keeps the
 * two equal); the bloom checks hash every log's address and topics, where a loop over arrays measured 4-5x slower.
 */
function permute(state: Uint32Array): void {
  let s0 = state[0]!,
    s1 = state[1]!,
    s2 = state[2]!,
    s3 = state[3]!,
    s4 = state[4]!,
    s5 = state[5]!,
    s6 = state[6]!,
    s7 = state[7]!,
    s8 = state[8]!,
    s9 = state[9]!,
    s10 = state[10]!,
    s11 = state[11]!,
    s12 = state[12]!,
    s13 = state[13]!,
    s14 = state[14]!,
    s15 = state[15]!,
    s16 = state[16]!,
    s17 = state[17]!,
    s18 = state[18]!,
    s19 = state[19]!,
    s20 = state[20]!,
    s21 = state[21]!,
    s22 = state[22]!,
    s23 = state[23]!,
    s24 = state[24]!,
    s25 = state[25]!,
    s26 = state[26]!,
    s27 = state[27]!,
    s28 = state[28]!,
    s29 = state[29]!,
    s30 = state[30]!,
    s31 = state[31]!,
    s32 = state[32]!,
    s33 = state[33]!,
    s34 = state[34]!,
    s35 = state[35]!,
    s36 = state[36]!,
    s37 = state[37]!,
    s38 = state[38]!,
    s39 = state[39]!,
    s40 = state[40]!,
    s41 = state[41]!,
    s42 = state[42]!,
    s43 = state[43]!,
    s44 = state[44]!,
    s45 = state[45]!,
    s46 = state[46]!,
    s47 = state[47]!,
    s48 = state[48]!,
    s49 = state[49]!;
  for (let round = 0; round < 24; round++) {
    const c0 = s0 ^ s10 ^ s20 ^ s30 ^ s40;
    const c1 = s1 ^ s11 ^ s21 ^ s31 ^ s41;
    const c2 = s2 ^ s12 ^ s22 ^ s32 ^ s42;
    const c3 = s3 ^ s13 ^ s23 ^ s33 ^ s43;
    const c4 = s4 ^ s14 ^ s24 ^ s34 ^ s44;
    const c5 = s5 ^ s15 ^ s25 ^ s35 ^ s45;
    const c6 = s6 ^ s16 ^ s26 ^ s36 ^ s46;
    const c7 = s7 ^ s17 ^ s27 ^ s37 ^ s47;
    const c8 = s8 ^ s18 ^ s28 ^ s38 ^ s48;
    const c9 = s9 ^ s19 ^ s29 ^ s39 ^ s49;
    const d0 = c8 ^ ((c2 << 1) | (c3 >>> 31));
    const d1 = c9 ^ ((c3 << 1) | (c2 >>> 31));
    const d2 = c0 ^ ((c4 << 1) | (c5 >>> 31));
    const d3 = c1 ^ ((c5 << 1) | (c4 >>> 31));
    const d4 = c2 ^ ((c6 << 1) | (c7 >>> 31));
    const d5 = c3 ^ ((c7 << 1) | (c6 >>> 31));
    const d6 = c4 ^ ((c8 << 1) | (c9 >>> 31));
    const d7 = c5 ^ ((c9 << 1) | (c8 >>> 31));
    const d8 = c6 ^ ((c0 << 1) | (c1 >>> 31));
    const d9 = c7 ^ ((c1 << 1) | (c0 >>> 31));
    const a0 = s0 ^ d0;
    const a1 = s1 ^ d1;
    const b0 = a0;
    const b1 = a1;
    const a2 = s2 ^ d2;
    const a3 = s3 ^ d3;
    const b20 = (a2 << 1) | (a3 >>> 31);
    const b21 = (a3 << 1) | (a2 >>> 31);
    const a4 = s4 ^ d4;
    const a5 = s5 ^ d5;
    const b40 = (a5 << 30) | (a4 >>> 2);
    const b41 = (a4 << 30) | (a5 >>> 2);
    const a6 = s6 ^ d6;
    const a7 = s7 ^ d7;
    const b10 = (a6 << 28) | (a7 >>> 4);
    const b11 = (a7 << 28) | (a6 >>> 4);
    const a8 = s8 ^ d8;
    const a9 = s9 ^ d9;
    const b30 = (a8 << 27) | (a9 >>> 5);
    const b31 = (a9 << 27) | (a8 >>> 5);
    const a10 = s10 ^ d0;
    const a11 = s11 ^ d1;
    const b32 = (a11 << 4) | (a10 >>> 28);
    const b33 = (a10 << 4) | (a11 >>> 28);
    const a12 = s12 ^ d2;
    const a13 = s13 ^ d3;
    const b2 = (a13 << 12) | (a12 >>> 20);
    const b3 = (a12 << 12) | (a13 >>> 20);
    const a14 = s14 ^ d4;
    const a15 = s15 ^ d5;
    const b22 = (a14 << 6) | (a15 >>> 26);
    const b23 = (a15 << 6) | (a14 >>> 26);
    const a16 = s16 ^ d6;
    const a17 = s17 ^ d7;
    const b42 = (a17 << 23) | (a16 >>> 9);
    const b43 = (a16 << 23) | (a17 >>> 9);
    const a18 = s18 ^ d8;
    const a19 = s19 ^ d9;
    const b12 = (a18 << 20) | (a19 >>> 12);
    const b13 = (a19 << 20) | (a18 >>> 12);
    const a20 = s20 ^ d0;
    const a21 = s21 ^ d1;
    const b14 = (a20 << 3) | (a21 >>> 29);
    const b15 = (a21 << 3) | (a20 >>> 29);
    const a22 = s22 ^ d2;
    const a23 = s23 ^ d3;
    const b34 = (a22 << 10) | (a23 >>> 22);
    const b35 = (a23 << 10) | (a22 >>> 22);
    const a24 = s24 ^ d4;
    const a25 = s25 ^ d5;
    const b4 = (a25 << 11) | (a24 >>> 21);
    const b5 = (a24 << 11) | (a25 >>> 21);
    const a26 = s26 ^ d6;
    const a27 = s27 ^ d7;
    const b24 = (a26 << 25) | (a27 >>> 7);
    const b25 = (a27 << 25) | (a26 >>> 7);
    const a28 = s28 ^ d8;
    const a29 = s29 ^ d9;
    const b44 = (a29 << 7) | (a28 >>> 25);
    const b45 = (a28 << 7) | (a29 >>> 25);
    const a30 = s30 ^ d0;
    const a31 = s31 ^ d1;
    const b46 = (a31 << 9) | (a30 >>> 23);
    const b47 = (a30 << 9) | (a31 >>> 23);
    const a32 = s32 ^ d2;
    const a33 = s33 ^ d3;
    const b16 = (a33 << 13) | (a32 >>> 19);
    const b17 = (a32 << 13) | (a33 >>> 19);
    const a34 = s34 ^ d4;
    const a35 = s35 ^ d5;
    const b36 = (a34 << 15) | (a35 >>> 17);
    const b37 = (a35 << 15) | (a34 >>> 17);
    const a36 = s36 ^ d6;
    const a37 = s37 ^ d7;
    const b6 = (a36 << 21) | (a37 >>> 11);
    const b7 = (a37 << 21) | (a36 >>> 11);
    const a38 = s38 ^ d8;
    const a39 = s39 ^ d9;
    const b26 = (a38 << 8) | (a39 >>> 24);
    const b27 = (a39 << 8) | (a38 >>> 24);
    const a40 = s40 ^ d0;
    const a41 = s41 ^ d1;
    const b28 = (a40 << 18) | (a41 >>> 14);
    const b29 = (a41 << 18) | (a40 >>> 14);
    const a42 = s42 ^ d2;
    const a43 = s43 ^ d3;
    const b48 = (a42 << 2) | (a43 >>> 30);
    const b49 = (a43 << 2) | (a42 >>> 30);
    const a44 = s44 ^ d4;
    const a45 = s45 ^ d5;
    const b18 = (a45 << 29) | (a44 >>> 3);
    const b19 = (a44 << 29) | (a45 >>> 3);
    const a46 = s46 ^ d6;
    const a47 = s47 ^ d7;
    const b38 = (a47 << 24) | (a46 >>> 8);
    const b39 = (a46 << 24) | (a47 >>> 8);
    const a48 = s48 ^ d8;
    const a49 = s49 ^ d9;
    const b8 = (a48 << 14) | (a49 >>> 18);
    const b9 = (a49 << 14) | (a48 >>> 18);
    s0 = b0 ^ (~b2 & b4);
    s1 = b1 ^ (~b3 & b5);
    s2 = b2 ^ (~b4 & b6);
    s3 = b3 ^ (~b5 & b7);
    s4 = b4 ^ (~b6 & b8);
    s5 = b5 ^ (~b7 & b9);
    s6 = b6 ^ (~b8 & b0);
    s7 = b7 ^ (~b9 & b1);
    s8 = b8 ^ (~b0 & b2);
    s9 = b9 ^ (~b1 & b3);
    s10 = b10 ^ (~b12 & b14);
    s11 = b11 ^ (~b13 & b15);
    s12 = b12 ^ (~b14 & b16);
    s13 = b13 ^ (~b15 & b17);
    s14 = b14 ^ (~b16 & b18);
    s15 = b15 ^ (~b17 & b19);
    s16 = b16 ^ (~b18 & b10);
    s17 = b17 ^ (~b19 & b11);
    s18 = b18 ^ (~b10 & b12);
    s19 = b19 ^ (~b11 & b13);
    s20 = b20 ^ (~b22 & b24);
    s21 = b21 ^ (~b23 & b25);
    s22 = b22 ^ (~b24 & b26);
    s23 = b23 ^ (~b25 & b27);
    s24 = b24 ^ (~b26 & b28);
    s25 = b25 ^ (~b27 & b29);
    s26 = b26 ^ (~b28 & b20);
    s27 = b27 ^ (~b29 & b21);
    s28 = b28 ^ (~b20 & b22);
    s29 = b29 ^ (~b21 & b23);
    s30 = b30 ^ (~b32 & b34);
    s31 = b31 ^ (~b33 & b35);
    s32 = b32 ^ (~b34 & b36);
    s33 = b33 ^ (~b35 & b37);
    s34 = b34 ^ (~b36 & b38);
    s35 = b35 ^ (~b37 & b39);
    s36 = b36 ^ (~b38 & b30);
    s37 = b37 ^ (~b39 & b31);
    s38 = b38 ^ (~b30 & b32);
    s39 = b39 ^ (~b31 & b33);
    s40 = b40 ^ (~b42 & b44);
    s41 = b41 ^ (~b43 & b45);
    s42 = b42 ^ (~b44 & b46);
    s43 = b43 ^ (~b45 & b47);
    s44 = b44 ^ (~b46 & b48);
    s45 = b45 ^ (~b47 & b49);
    s46 = b46 ^ (~b48 & b40);
    s47 = b47 ^ (~b49 & b41);
    s48 = b48 ^ (~b40 & b42);
    s49 = b49 ^ (~b41 & b43);
    s0 ^= ROUND_LO[round]!;
    s1 ^= ROUND_HI[round]!;
  }
  state[0] = s0;
  state[1] = s1;
  state[2] = s2;
  state[3] = s3;
  state[4] = s4;
  state[5] = s5;
  state[6] = s6;
  state[7] = s7;
  state[8] = s8;
  state[9] = s9;
  state[10] = s10;
  state[11] = s11;
  state[12] = s12;
  state[13] = s13;
  state[14] = s14;
  state[15] = s15;
  state[16] = s16;
  state[17] = s17;
  state[18] = s18;
  state[19] = s19;
  state[20] = s20;
  state[21] = s21;
  state[22] = s22;
  state[23] = s23;
  state[24] = s24;
  state[25] = s25;
  state[26] = s26;
  state[27] = s27;
  state[28] = s28;
  state[29] = s29;
  state[30] = s30;
  state[31] = s31;
  state[32] = s32;
  state[33] = s33;
  state[34] = s34;
  state[35] = s35;
  state[36] = s36;
  state[37] = s37;
  state[38] = s38;
  state[39] = s39;
  state[40] = s40;
  state[41] = s41;
  state[42] = s42;
  state[43] = s43;
  state[44] = s44;
  state[45] = s45;
  state[46] = s46;
  state[47] = s47;
  state[48] = s48;
  state[49] = s49;
}

const RATE = 136;
const state = new Uint32Array(50);

/** Keccak-256 of `input`. */
export function keccak256(input: Uint8Array): Uint8Array {
  state.fill(0);
  // Byte i of a block goes to lane i / 8, little-endian: as 32-bit halves, word i / 4.
  let at = 0;
  for (; at + RATE <= input.length; at += RATE) {
    for (let i = 0; i < RATE; i++) state[i >> 2]! ^= input[at + i]! << (8 * (i & 3));
    permute(state);
  }
  const rest = input.length - at;
  for (let i = 0; i < rest; i++) state[i >> 2]! ^= input[at + i]! << (8 * (i & 3));
  state[rest >> 2]! ^= 0x01 << (8 * (rest & 3));
  state[(RATE - 1) >> 2]! ^= 0x80 << 24;
  permute(state);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = state[i >> 2]! >>> (8 * (i & 3));
  return out;
}

/** A hex digit's value; -1 for any other character. */
function nibble(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * Keccak-256 of the bytes a `0x…` hex string spells, read straight from the text (a bloom check hashes thousands
 * of addresses and topics: no buffer is made for each); undefined when it is not even-length hex.
 */
export function keccak256Hex(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || hex.charCodeAt(0) !== 0x30 || (hex.charCodeAt(1) | 0x20) !== 0x78) return undefined;
  const length = (hex.length - 2) / 2;
  const bytes = length < RATE ? SHORT : new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const high = nibble(hex.charCodeAt(2 + 2 * i));
    const low = nibble(hex.charCodeAt(3 + 2 * i));
    if (high < 0 || low < 0) return undefined;
    bytes[i] = (high << 4) | low;
  }
  return keccak256(length < RATE ? SHORT.subarray(0, length) : bytes);
}

/** The bytes of a short item (an address, a topic), reused from one hash to the next. */
const SHORT = new Uint8Array(RATE);
