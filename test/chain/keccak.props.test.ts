/**
 * The bloom checks' hashing on its own (src/chain/keccak.ts): Keccak-256 read straight from hex text equals
 * viem's and known vectors, and refuses anything that is not even-length hex; the permutation is its generator's
 * output (scripts/keccak-permutation.ts). Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { keccak256 as viemKeccak } from "viem";
import { describe, expect, it } from "vitest";
import { committedPermutation, FILE, permutationSource } from "../../scripts/keccak-permutation.js";
import { keccak256Hex } from "../../src/chain/keccak.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 23);
const options = { numRuns: RUNS, seed: SEED };
const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString("hex")}`;

describe("Keccak-256 of hex text", () => {
  it("gives the known hashes: of nothing, and of the event signatures the index reads", () => {
    const ascii = (text: string) => `0x${Buffer.from(text).toString("hex")}`;
    const known: [string, string][] = [
      ["0x", "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"],
      [
        ascii("Transfer(address,address,uint256)"),
        "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
      ],
      [
        ascii("TransferSingle(address,address,address,uint256,uint256)"),
        "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
      ],
      [ascii("x".repeat(300)), viemKeccak(ascii("x".repeat(300)) as `0x${string}`)],
    ];
    for (const [input, hash] of known) expect(hex(keccak256Hex(input)!)).toBe(hash);
  });

  it("is the permutation its generator writes (scripts/keccak-permutation.ts)", () => {
    expect(committedPermutation(readFileSync(FILE, "utf8"))).toBe(permutationSource());
  });

  it("equals viem's on any bytes, in either case, and is undefined for anything not even-length hex", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, upper) => {
        const text = hex(bytes);
        const hash = keccak256Hex(upper ? `0x${text.slice(2).toUpperCase()}` : text);
        expect(hash && hex(hash)).toBe(viemKeccak(bytes));
      }),
      options,
    );
    for (const bad of ["", "0x1", "12", "0xzz", "0x0g", "0x0a0g", "0x0a 1", "0xg0"]) {
      expect(keccak256Hex(bad)).toBeUndefined();
    }
  });

  it("is undefined for any text that is not even-length hex", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40 }),
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 2 }),
        (bytes, at, junk) => {
          const text = hex(bytes);
          const i = 2 + (at % (text.length - 1));
          const mangled = text.slice(0, i) + junk + text.slice(i);
          const valid = mangled.length % 2 === 0 && /^0x[0-9a-fA-F]*$/.test(mangled);
          expect(keccak256Hex(mangled) === undefined).toBe(!valid);
        },
      ),
      options,
    );
  });
});
