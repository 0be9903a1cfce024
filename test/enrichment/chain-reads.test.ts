/**
 * src/enrichment/chain-reads.ts on its own, against a loopback JSON-RPC node whose `eth_call` answers the test writes
 * (test/upstreams/scripted-rpc.ts): which call each read makes (`tokenURI` or `uri` by the token's kind, `{id}`
 * filled in; `name()`; the ENS registry, the reverse record and the forward check), a revert read as no answer and
 * a node's failure thrown; `namehash` by EIP-137's vectors; `abiString` bounded and strict. Against contracts on a
 * real chain: test/enrichment/enrich.test.ts; any answer at all: test/enrichment/answers.props.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RpcClient } from "../../src/chain/rpc.js";
import {
  abiString,
  contractNameOf,
  ENS_REGISTRY,
  ensNameOf,
  namehash,
  tokenUriOf,
} from "../../src/enrichment/chain-reads.js";
import { abiAddressAnswer, abiStringAnswer, SELECTORS } from "../support/enrichment-helpers.js";
import { testConfig } from "../support/helpers.js";
import {
  answerEach,
  failed,
  ok,
  type ScriptedCall,
  type ScriptedRpc,
  startScriptedRpc,
} from "../upstreams/scripted-rpc.js";

const CONTRACT = "0x1111111111111111111111111111111111111111";
const HOLDER = "0x2222222222222222222222222222222222222222";
const REVERSE_RESOLVER = "0x3333333333333333333333333333333333333333";
const RESOLVER = "0x4444444444444444444444444444444444444444";
const word = (n: bigint) => n.toString(16).padStart(64, "0");
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** An `eth_call` answer keyed by `to` and `data`: a hex result, "revert", or "fail" (a node error). */
type Answers = Record<string, string>;

const nodes: ScriptedRpc[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

/** A node answering `eth_call` from `answers` (anything else reverts); the calls it got, as `to data`. */
async function node(answers: Answers) {
  const asked: string[] = [];
  const reply = (call: ScriptedCall) => {
    const [{ to, data }, block] = call.params as [{ to: string; data: string }, string];
    expect([call.method, block]).toEqual(["eth_call", "latest"]);
    const key = `${to} ${data}`;
    asked.push(key);
    const answer = answers[key] ?? "revert";
    if (answer === "revert") return failed(call, 3, "execution reverted");
    if (answer === "fail") return failed(call, -32000, "header not found");
    return ok(call, answer);
  };
  const server = await startScriptedRpc((request) => answerEach(request, reply));
  nodes.push(server);
  const rpc = new RpcClient(server.url, {
    pool: testConfig().pool,
    timeoutMs: 2_000,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1_000 },
  });
  return { rpc, asked };
}

describe("namehash", () => {
  it("is EIP-137's", () => {
    expect(hex(namehash(""))).toBe("0".repeat(64));
    expect(hex(namehash("eth"))).toBe("93cdeb708b7545dc668eb9280176169d1c33cfd8ed6f04690a0bcc88a93fc4ae");
    expect(hex(namehash("foo.eth"))).toBe("de9b09fd7c5f901e23a3f19fecc54828e9c848539801e86591bd9801b019f84f");
  });
});

describe("abiString", () => {
  it("reads an ABI string, and a bytes32 name up to its first zero byte", () => {
    expect(abiString(`0x${abiStringAnswer("Bored Ape Yacht Club")}`, 512)).toBe("Bored Ape Yacht Club");
    expect(abiString(`0x${abiStringAnswer("")}`, 512)).toBe("");
    expect(abiString(`0x${Buffer.from("Maker").toString("hex").padEnd(64, "0")}`, 512)).toBe("Maker");
  });

  it("gives undefined for anything else: not hex, too short, a bad offset, too long, broken UTF-8", () => {
    const good = abiStringAnswer("hello");
    for (const bad of [undefined, 42, "hello", `0x${good}0`, `0x${good.slice(0, 100)}`, "0xzz"]) {
      expect(abiString(bad, 512)).toBeUndefined();
    }
    // An offset that is not a multiple of 32, or points past the end.
    expect(abiString(`0x${word(33n)}${good.slice(64)}`, 512)).toBeUndefined();
    expect(abiString(`0x${word(4096n)}${good.slice(64)}`, 512)).toBeUndefined();
    // Longer than allowed, or a length past the end of the answer.
    expect(abiString(`0x${good}`, 4)).toBeUndefined();
    expect(abiString(`0x${word(32n)}${word(1000n)}${"61".repeat(32)}`, 2_000)).toBeUndefined();
    expect(abiString(`0x${word(32n)}${word(2n)}${"fffe".padEnd(64, "0")}`, 512)).toBeUndefined();
  });
});

describe("tokenUriOf", () => {
  const id = 0x2an;
  const args = word(id);

  it("asks tokenURI of an ERC-721, and nothing else", async () => {
    const { rpc, asked } = await node({
      [`${CONTRACT} 0x${SELECTORS.tokenURI}${args}`]: `0x${abiStringAnswer("ipfs://cat/42")}`,
    });
    expect(await tokenUriOf(rpc, CONTRACT, id, "erc721", 1_024)).toBe("ipfs://cat/42");
    expect(asked).toEqual([`${CONTRACT} 0x${SELECTORS.tokenURI}${args}`]);
  });

  it("asks uri of an ERC-1155 and fills in {id} as 64 hex digits", async () => {
    const { rpc, asked } = await node({
      [`${CONTRACT} 0x${SELECTORS.uri}${args}`]: `0x${abiStringAnswer("https://x.example/{id}.json?i={id}")}`,
    });
    expect(await tokenUriOf(rpc, CONTRACT, id, "erc1155", 1_024)).toBe(`https://x.example/${args}.json?i=${args}`);
    expect(asked).toEqual([`${CONTRACT} 0x${SELECTORS.uri}${args}`]);
  });

  it("of a contract of unknown kind, takes the one that answers: tokenURI first, else uri", async () => {
    const { rpc, asked } = await node({
      [`${CONTRACT} 0x${SELECTORS.uri}${args}`]: `0x${abiStringAnswer("ar://{id}")}`,
    });
    expect(await tokenUriOf(rpc, CONTRACT, id, "unknown", 1_024)).toBe(`ar://${args}`);
    expect(asked).toEqual([`${CONTRACT} 0x${SELECTORS.tokenURI}${args}`, `${CONTRACT} 0x${SELECTORS.uri}${args}`]);
  });

  it("reads a revert or an answer over the limit as none, and throws a node's failure", async () => {
    const { rpc } = await node({
      [`${CONTRACT} 0x${SELECTORS.tokenURI}${word(1n)}`]: `0x${abiStringAnswer("x".repeat(100))}`,
      [`${CONTRACT} 0x${SELECTORS.tokenURI}${word(2n)}`]: "fail",
    });
    expect(await tokenUriOf(rpc, CONTRACT, 0n, "erc721", 1_024)).toBeUndefined();
    expect(await tokenUriOf(rpc, CONTRACT, 1n, "erc721", 99)).toBeUndefined();
    expect(await tokenUriOf(rpc, CONTRACT, 1n, "erc721", 100)).toBe("x".repeat(100));
    await expect(tokenUriOf(rpc, CONTRACT, 2n, "erc721", 1_024)).rejects.toThrow(/header not found/);
  });
});

describe("contractNameOf", () => {
  it("is name(), or undefined when the contract has none", async () => {
    const { rpc, asked } = await node({ [`${CONTRACT} 0x${SELECTORS.name}`]: `0x${abiStringAnswer("Loopback Cats")}` });
    expect(await contractNameOf(rpc, CONTRACT)).toBe("Loopback Cats");
    expect(await contractNameOf(rpc, HOLDER)).toBeUndefined();
    expect(asked).toEqual([`${CONTRACT} 0x${SELECTORS.name}`, `${HOLDER} 0x${SELECTORS.name}`]);
  });
});

describe("ensNameOf", () => {
  const reverseNode = hex(namehash(`${HOLDER.slice(2)}.addr.reverse`));
  const nameNode = hex(namehash("cat.eth"));
  /** The answers of an address whose reverse record says `name`, and whose forward record says `forward`. */
  const ens = (name: string, forward: string): Answers => ({
    [`${ENS_REGISTRY} 0x${SELECTORS.resolver}${reverseNode}`]: `0x${abiAddressAnswer(REVERSE_RESOLVER)}`,
    [`${REVERSE_RESOLVER} 0x${SELECTORS.ensName}${reverseNode}`]: `0x${abiStringAnswer(name)}`,
    [`${ENS_REGISTRY} 0x${SELECTORS.resolver}${hex(namehash(name.toLowerCase()))}`]: `0x${abiAddressAnswer(RESOLVER)}`,
    [`${RESOLVER} 0x${SELECTORS.addr}${hex(namehash(name.toLowerCase()))}`]: `0x${abiAddressAnswer(forward)}`,
  });

  it("is the reverse record's name when its forward record is the same address, asked in that order", async () => {
    const { rpc, asked } = await node(ens("cat.eth", HOLDER));
    expect(await ensNameOf(rpc, HOLDER.toUpperCase().replace("0X", "0x"))).toBe("cat.eth");
    expect(asked).toEqual([
      `${ENS_REGISTRY} 0x${SELECTORS.resolver}${reverseNode}`,
      `${REVERSE_RESOLVER} 0x${SELECTORS.ensName}${reverseNode}`,
      `${ENS_REGISTRY} 0x${SELECTORS.resolver}${nameNode}`,
      `${RESOLVER} 0x${SELECTORS.addr}${nameNode}`,
    ]);
  });

  it("reads the name in lower case", async () => {
    const { rpc } = await node(ens("Cat.ETH", HOLDER));
    expect(await ensNameOf(rpc, HOLDER)).toBe("cat.eth");
  });

  it("is undefined when the forward record names another address, or there is no resolver", async () => {
    expect(await ensNameOf((await node(ens("cat.eth", CONTRACT))).rpc, HOLDER)).toBeUndefined();
    expect(await ensNameOf((await node({})).rpc, HOLDER)).toBeUndefined();
    const zero = await node({
      [`${ENS_REGISTRY} 0x${SELECTORS.resolver}${reverseNode}`]: `0x${"0".repeat(64)}`,
    });
    expect(await ensNameOf(zero.rpc, HOLDER)).toBeUndefined();
    expect(zero.asked).toHaveLength(1);
  });

  it("shows no name that could not be a DNS-style one, and asks nothing more of it", async () => {
    for (const name of ["cat", "c at.eth", "cat..eth", "\u202Etac.eth", "cat.eth\n"]) {
      const { rpc, asked } = await node(ens(name, HOLDER));
      expect(await ensNameOf(rpc, HOLDER)).toBeUndefined();
      expect(asked).toHaveLength(2);
    }
  });

  it("asks nothing for what is not an address", async () => {
    const { rpc, asked } = await node(ens("cat.eth", HOLDER));
    for (const address of ["", "0x1234", `${HOLDER}00`, "not an address"])
      expect(await ensNameOf(rpc, address)).toBeUndefined();
    expect(asked).toEqual([]);
  });
});
