/**
 * Puts a contract deployed on anvil at another address (a venue's mainnet address, which the decoders trust):
 * its runtime code with anvil_setCode, and every storage slot the given transactions wrote at its deployed
 * address (the prestate tracer's post-state, in order) with anvil_setStorageAt. Immutables live in the code, so
 * they come along; anything that hashed `address(this)` at deployment keeps the deployed address.
 */
import type { Hex } from "viem";
import type { Anvil } from "./index-helpers.js";

export async function placeContract(anvil: Anvil, deployed: string, at: string, txHashes: readonly string[]) {
  const storage: Record<string, Hex> = {};
  for (const hash of txHashes) {
    const trace = await anvil.rpc<{ post: Record<string, { storage?: Record<string, Hex> }> }>(
      "debug_traceTransaction",
      [hash, { tracer: "prestateTracer", tracerConfig: { diffMode: true } }],
    );
    Object.assign(storage, trace.post[deployed.toLowerCase()]?.storage);
  }
  await anvil.rpc("anvil_setCode", [at, await anvil.rpc<Hex>("eth_getCode", [deployed, "latest"])]);
  for (const [slot, value] of Object.entries(storage)) await anvil.rpc("anvil_setStorageAt", [at, slot, value]);
}
