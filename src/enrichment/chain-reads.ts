/**
 * What the JSON-RPC node says of a token and an address, by `eth_call` at the latest block: a token's URI
 * (`tokenURI(uint256)` of ERC-721, `uri(uint256)` of ERC-1155 with its `{id}` filled in), a contract's `name()`,
 * and an address's ENS name: the reverse record, kept only when the name's forward record (`addr`) is the same
 * address, since anyone can set any name as their reverse record. Answers are read as ABI, bounded; an answer that
 * is not what the call returns is undefined. A node error throws (the caller leaves the field empty).
 */
import { keccak256, type RpcClient, RpcError } from "../chain/index.js";

const TOKEN_URI = "0xc87b56dd";
const URI = "0x0e89341c";
const NAME = "0x06fdde03";
/** ENS: registry `resolver(bytes32)`, resolver `name(bytes32)` and `addr(bytes32)`. */
const RESOLVER = "0x0178b8bf";
const NAME_OF_NODE = "0x691f3431";
const ADDR_OF_NODE = "0x3b3b57de";
/** The ENS registry, at the same address on mainnet and its testnets. */
export const ENS_REGISTRY = "0x00000000000c2e074ec69a0dfb2997ba6c7d2e1e";

/** Longest ENS name shown (DNS's limit). */
const MAX_ENS_NAME = 255;

const word = (n: bigint) => n.toString(16).padStart(64, "0");

/** An ABI-encoded `string` (or a `bytes32` name of an old contract) of at most `maxBytes`; undefined otherwise. */
export function abiString(data: unknown, maxBytes: number): string | undefined {
  if (typeof data !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(data)) return undefined;
  const hex = data.slice(2);
  if (hex.length === 64) {
    // bytes32: text padded with zero bytes (MKR's and other early tokens' name()).
    const bytes = Buffer.from(hex, "hex");
    const end = bytes.indexOf(0);
    return utf8(end < 0 ? bytes : bytes.subarray(0, end));
  }
  if (hex.length < 128) return undefined;
  const offset = BigInt(`0x${hex.slice(0, 64)}`);
  if (offset % 32n !== 0n || offset * 2n + 64n > BigInt(hex.length)) return undefined;
  const at = Number(offset) * 2;
  const length = BigInt(`0x${hex.slice(at, at + 64)}`);
  if (length > BigInt(maxBytes) || BigInt(at + 64) + length * 2n > BigInt(hex.length)) return undefined;
  return utf8(Buffer.from(hex.slice(at + 64, at + 64 + Number(length) * 2), "hex"));
}

/** Valid UTF-8 only: a string of broken bytes is no name. */
function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** An ABI-encoded `address` word, lower case; undefined when the word is not one. */
function abiAddress(data: unknown): string | undefined {
  if (typeof data !== "string" || !/^0x0{24}[0-9a-fA-F]{40}$/.test(data)) return undefined;
  return `0x${data.slice(26).toLowerCase()}`;
}

/** A call's answer, or undefined when the contract reverts or has no such function (an RPC execution error). */
async function ethCall(rpc: RpcClient, to: string, data: string, maxAnswerBytes: number): Promise<unknown> {
  try {
    return await rpc.call("eth_call", [{ to, data }, "latest"], maxAnswerBytes);
  } catch (err) {
    // A revert is the contract's answer ("no such token", "no such function"); anything else is the node's failure.
    if (err instanceof RpcError && (err.code === 3 || /revert|execution/i.test(err.rpcMessage))) return "0x";
    throw err;
  }
}

/** The JSON answer of a call returning `bytes` of text: 2 hex digits per byte, an ABI head and some slack. */
const answerBytes = (maxBytes: number) => maxBytes * 2 + 1024;

/**
 * The token's URI as its contract states it: `tokenURI` for ERC-721, `uri` for ERC-1155 (its `{id}` replaced by the
 * id as 64 hex digits, as EIP-1155 says); for a contract of unknown kind, the one that answers.
 */
export async function tokenUriOf(
  rpc: RpcClient,
  contract: string,
  tokenId: bigint,
  kind: string,
  maxBytes: number,
): Promise<string | undefined> {
  const args = word(tokenId);
  const ask = async (selector: string) =>
    abiString(await ethCall(rpc, contract, selector + args, answerBytes(maxBytes)), maxBytes);
  if (/1155/.test(kind)) return fillId(await ask(URI), args);
  if (/721/.test(kind)) return ask(TOKEN_URI);
  return (await ask(TOKEN_URI)) ?? fillId(await ask(URI), args);
}

const fillId = (uri: string | undefined, idHex: string) => uri?.replaceAll("{id}", idHex);

/** The contract's `name()`. */
export async function contractNameOf(rpc: RpcClient, contract: string): Promise<string | undefined> {
  return abiString(await ethCall(rpc, contract, NAME, 4096), 512);
}

/** ENS's namehash of a name (labels as given: the name read back from the reverse record). */
export function namehash(name: string): Buffer {
  let node = Buffer.alloc(32);
  if (name === "") return node;
  for (const label of name.split(".").reverse()) {
    const labelHash = keccak256(Buffer.from(label, "utf8"));
    node = Buffer.from(keccak256(Buffer.concat([node, labelHash])));
  }
  return node;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** The resolver the registry names for a node; undefined when none. */
async function resolverOf(rpc: RpcClient, node: Buffer): Promise<string | undefined> {
  const resolver = abiAddress(await ethCall(rpc, ENS_REGISTRY, RESOLVER + hex(node), 1024));
  return resolver && !/^0x0{40}$/.test(resolver) ? resolver : undefined;
}

/**
 * The address's primary ENS name, checked forward: the reverse record's name (on `<address>.addr.reverse`), kept
 * only when that name's resolver says `addr(name)` is the same address. Undefined when there is none.
 */
export async function ensNameOf(rpc: RpcClient, address: string): Promise<string | undefined> {
  const lower = address.toLowerCase();
  if (!/^0x[0-9a-f]{40}$/.test(lower)) return undefined;
  const reverseNode = namehash(`${lower.slice(2)}.addr.reverse`);
  const reverseResolver = await resolverOf(rpc, reverseNode);
  if (!reverseResolver) return undefined;
  const name = abiString(
    await ethCall(rpc, reverseResolver, NAME_OF_NODE + hex(reverseNode), 4096),
    MAX_ENS_NAME,
  )?.toLowerCase();
  // A name that could not be a DNS-style name (controls, spaces, bidi overrides, empty labels) is not shown.
  if (!name || !/^[^\s\p{Cc}\p{Cf}.]+(\.[^\s\p{Cc}\p{Cf}.]+)+$/u.test(name)) return undefined;
  const node = namehash(name);
  const resolver = await resolverOf(rpc, node);
  if (!resolver) return undefined;
  const forward = abiAddress(await ethCall(rpc, resolver, ADDR_OF_NODE + hex(node), 1024));
  return forward === lower ? name : undefined;
}
