/**
 * src/demo/digest.ts on its own: the sales digest `npm start` mails, built from records as the retrievers give them
 * and written through the outbox transport, then read back as a mail client would.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { runNode } from "../../src/core/node.js";
import { salesDigestRequest, sendSalesDigest, shortAddress } from "../../src/demo/digest.js";
import { emailSend } from "../../src/nodes/index.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { CONTRACT_1155, standardDataset } from "../upstreams/nftport-data.js";

type Sale = Extract<TransactionRecord, { type: "sale" }>;

let root: string;
let seq = 0;
const newDir = () => join(root, `outbox-${++seq}`);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "chainmail-digest-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The one message of the outbox in `dir`, parsed. */
async function onlyMail(dir: string) {
  const [entry, ...more] = await listOutbox(dir);
  expect(more).toHaveLength(0);
  return simpleParser(await readFile(join(dir, entry!.file)));
}

describe("sales digest", () => {
  it("turns sale records into a readable text + HTML message, through the outbox", async () => {
    const records = standardDataset(24).byContract.get(CONTRACT_1155)! as unknown as TransactionRecord[];
    const sales = records.filter((r) => r.type === "sale");
    expect(sales.length).toBeGreaterThan(1);
    const request = salesDigestRequest(records, { from: "digest@chainmail.test", to: "owner@example.test" });
    expect(request.Messages).toHaveLength(1);
    const dir = newDir();
    const out = await runNode(
      emailSend,
      { request },
      { config: loadConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: dir }) },
    );
    expect(out.error).toBeUndefined();
    const [entry] = await listOutbox(dir);
    const mail = await simpleParser(await readFile(join(dir, entry!.file)));
    expect(mail.subject).toBe(`NFT sales digest: ${sales.length} sales`);
    const lines = mail.text!.split("\n").filter((l) => /^\d+\. /.test(l));
    expect(lines).toHaveLength(sales.length);
    const first = sales[0] as Extract<TransactionRecord, { type: "sale" }>;
    expect(mail.text).toContain(first.transaction_hash);
    // ERC-1155 quantities beyond 2^53 are printed exactly.
    expect(mail.text).toContain(`x${String(first.quantity)}`);
    expect(mail.html).toContain("<table");
    expect((mail.html as string).match(/<tr>/g)).toHaveLength(sales.length + 1);
  });

  it("says so when there are no sales", () => {
    const request = salesDigestRequest([], { from: "a@chainmail.test", to: "b@example.test" });
    expect(request.Messages[0]!.Subject).toBe("NFT sales digest: 0 sales");
    expect(request.Messages[0]!.TextPart).toContain("No sales in this period.");
  });
});

describe("the digest's text", () => {
  const sale = (over: Partial<Sale>): Sale =>
    ({
      type: "sale",
      buyer_address: "0xb0b0000000000000000000000000000000000b0b",
      seller_address: "0x5e11000000000000000000000000000000005e11",
      nft: { contract_type: "ERC721", contract_address: "0x7210000000000000000000000000000000000721", token_id: "7" },
      quantity: 1,
      price_details: { asset_type: "ETH", price: 1.5, price_usd: 4500.25 },
      transaction_hash: `0x${"ab".repeat(32)}`,
      block_number: 17_000_000,
      transaction_date: "2026-11-28T10:00:00",
      marketplace: "opensea",
      ...over,
    }) as Sale;

  it("shortens addresses to 0x1234…abcd and leaves short texts whole", () => {
    expect(shortAddress("0x7210000000000000000000000000000000000721")).toBe("0x7210…0721");
    expect(shortAddress("opensea")).toBe("opensea");
    expect(shortAddress(undefined)).toBe("?");
  });

  it("sums ETH sales in ETH and every sale in USD, and names an ERC-20 price by its token", () => {
    const weth = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
    const request = salesDigestRequest(
      [
        sale({}),
        sale({ price_details: { asset_type: "ERC20", contract_address: weth, price: 2, price_usd: 6000 } }),
        { ...sale({}), type: "transfer" } as unknown as TransactionRecord,
      ],
      { from: "a@chainmail.test", to: "b@example.test", title: "Whales" },
    );
    const message = request.Messages[0]!;
    expect(message.Subject).toBe("Whales: 2 sales");
    expect(message.TextPart).toContain("Whales: 2 sales, 1.5 ETH in ETH sales, $10,500.25 in total");
    expect(message.TextPart).toContain("1.5 ETH ($4,500.25)");
    expect(message.TextPart).toContain("2 ERC20 0xc02a…6cc2 ($6,000)");
    expect(message.TextPart).toContain("0x5e11…5e11 -> 0xb0b0…0b0b on opensea, block 17000000");
  });

  it("escapes what the records carry in its HTML (a marketplace name is not markup)", () => {
    const request = salesDigestRequest([sale({ marketplace: '<img src=x onerror="alert(1)">' as never })], {
      from: "a@chainmail.test",
      to: "b@example.test",
      title: "Tom & Jerry's <sales>",
    });
    const html = request.Messages[0]!.HTMLPart!;
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).toContain('<h1 style="font-family:sans-serif">Tom &amp; Jerry&#39;s &lt;sales&gt;</h1>');
  });

  it("sends through the outbox for `npm start`, and says where to read it", async () => {
    const dir = newDir();
    const result = await sendSalesDigest([sale({})], dir);
    expect(result.summary).toBe(
      `written to the outbox in ${dir} (read it: chainmail outbox list --dir ${dir}; chainmail outbox show <id> --dir ${dir})`,
    );
    const mail = await onlyMail(dir);
    expect(mail.subject).toBe("NFT sales digest: 1 sale");
    expect(mail.from?.text).toBe('"chainmail" <digest@chainmail.local>');
  });
});
