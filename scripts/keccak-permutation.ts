/**
 * Writes Keccak-f[1600]'s permutation in src/chain/keccak.ts (the function `permute`) from the reference's rotation
 * offsets and lane moves, lane by lane over 32-bit halves held in local variables. Written out, it hashes a bloom
 * item 4-5× faster than a looped permutation, @noble/hashes' included (BENCHMARKS.md, "Keccak: hand-written or
 * @noble/hashes"). Run `npx tsx scripts/keccak-permutation.ts` after changing the generator; a test fails while the
 * file and the generator differ.
 */
import { readFileSync, writeFileSync } from "node:fs";

export const FILE = new URL("../src/chain/keccak.ts", import.meta.url);
const START = "function permute(state: Uint32Array): void {\n";
const END = "\n}\n";

/** ρ's rotation offset of lane x + 5y (the Keccak reference's table). */
const ROTATION = [0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14];

/** `lo` and `hi` (the 32-bit halves of a 64-bit lane) rotated left by `r` bits, as the low and high half. */
function rotated(lo: string, hi: string, r: number): [string, string] {
  if (r === 0) return [lo, hi];
  if (r < 32) return [`(${lo} << ${r}) | (${hi} >>> ${32 - r})`, `(${hi} << ${r}) | (${lo} >>> ${32 - r})`];
  const s = r - 32; // no offset is 32
  return [`(${hi} << ${s}) | (${lo} >>> ${32 - s})`, `(${lo} << ${s}) | (${hi} >>> ${32 - s})`];
}

/** The permutation's source, from its signature to its closing brace. */
export function permutationSource(): string {
  const lines: string[] = [START.trimEnd()];
  const halves = Array.from({ length: 50 }, (_, k) => k);
  lines.push(`  let ${halves.map((k) => `s${k} = state[${k}]!`).join(",\n    ")};`);
  lines.push("  for (let round = 0; round < 24; round++) {");
  // θ: each column's parity, then what each column's lanes are xored with.
  for (let k = 0; k < 10; k++)
    lines.push(`    const c${k} = s${k} ^ s${k + 10} ^ s${k + 20} ^ s${k + 30} ^ s${k + 40};`);
  for (let x = 0; x < 5; x++) {
    const left = 2 * ((x + 4) % 5);
    const right = 2 * ((x + 1) % 5);
    lines.push(`    const d${2 * x} = c${left} ^ ((c${right} << 1) | (c${right + 1} >>> 31));`);
    lines.push(`    const d${2 * x + 1} = c${left + 1} ^ ((c${right + 1} << 1) | (c${right} >>> 31));`);
  }
  // ρ and π: lane (x, y), θ applied, rotated by its offset and moved to (y, 2x + 3y).
  for (let lane = 0; lane < 25; lane++) {
    const x = lane % 5;
    const y = Math.floor(lane / 5);
    const to = y + 5 * ((2 * x + 3 * y) % 5);
    lines.push(`    const a${2 * lane} = s${2 * lane} ^ d${2 * x};`);
    lines.push(`    const a${2 * lane + 1} = s${2 * lane + 1} ^ d${2 * x + 1};`);
    const [lo, hi] = rotated(`a${2 * lane}`, `a${2 * lane + 1}`, ROTATION[lane]!);
    lines.push(`    const b${2 * to} = ${lo};`);
    lines.push(`    const b${2 * to + 1} = ${hi};`);
  }
  // χ: each lane with its two right-hand neighbours in its row.
  for (let lane = 0; lane < 25; lane++) {
    const row = lane - (lane % 5);
    const next = row + ((lane + 1) % 5);
    const after = row + ((lane + 2) % 5);
    for (const half of [0, 1])
      lines.push(`    s${2 * lane + half} = b${2 * lane + half} ^ (~b${2 * next + half} & b${2 * after + half});`);
  }
  // ι: the round constant.
  lines.push("    s0 ^= ROUND_LO[round]!;", "    s1 ^= ROUND_HI[round]!;", "  }");
  for (const k of halves) lines.push(`  state[${k}] = s${k};`);
  return `${lines.join("\n")}${END}`;
}

/** The file's permutation as it stands (undefined when the file has none). */
export function committedPermutation(file: string): string | undefined {
  const start = file.indexOf(START);
  const end = file.indexOf(END, start);
  return start === -1 || end === -1 ? undefined : file.slice(start, end + END.length);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  const file = readFileSync(FILE, "utf8");
  const committed = committedPermutation(file);
  if (!committed) throw new Error("src/chain/keccak.ts has no permute function to replace");
  writeFileSync(FILE, file.replace(committed, permutationSource()));
}
