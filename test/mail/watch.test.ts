/**
 * The watch and the suppression list: a recipient suppressed in the watch's store (here by hand; a Mailjet event
 * or an unsubscribe link does the same) is never mailed, and `watch status` says so. NFTPort's local server, the
 * outbox.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addSuppression, mailStatus } from "../../src/mail/api.js";
import { closeMailStores } from "../../src/mail/open.js";
import { listOutbox } from "../../src/transports/outbox/store.js";
import { watch, watchStatus } from "../../src/watch/watch.js";
import { type NftportServer, type Rec, startNftport, VALID_KEY } from "../upstreams/nftport.js";

const CONTRACT = "0x4444444444444444444444444444444444444444";
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const sale = (block: number, tokenId: number): Rec => ({
  type: "sale",
  buyer_address: "0x00000000000000000000000000000000000000b0",
  seller_address: "0x00000000000000000000000000000000000000a0",
  nft: { contract_type: "ERC721", contract_address: CONTRACT, token_id: String(tokenId) },
  quantity: 1,
  price_details: { asset_type: "ETH", price: 1, price_usd: 2000 },
  transaction_hash: hash(block * 7),
  block_hash: hash(block * 11),
  block_number: block,
  transaction_date: new Date(Date.UTC(2023, 0, 1) + block * 12_000).toISOString().slice(0, 19),
  marketplace: "opensea",
});

let server: NftportServer;
const dir = mkdtempSync(join(tmpdir(), "chainmail-mail-watch-"));
beforeAll(async () => {
  server = await startNftport({ byContract: new Map([[CONTRACT, [sale(1000, 1)]]]) });
});
afterAll(async () => {
  await closeMailStores();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a watch and the suppression list", () => {
  it("never mails a suppressed recipient, sends to the others, and says so in watch status", async () => {
    const store = join(dir, "watch.sqlite");
    const env = {
      NFT_SOURCE: "nftport",
      NFTPORT_BASE_URL: server.url,
      NFTPORT_API_KEY: VALID_KEY,
      INDEX_DB: store,
      EMAIL_TRANSPORT: "outbox",
      OUTBOX_DIR: join(dir, "outbox"),
    };
    const rule = (id: string, to: string[]) => ({
      id,
      contract_address: CONTRACT,
      mail: { to: to.map((Email) => ({ Email })) },
    });
    const config = {
      from: { Email: "watch@chainmail.test" },
      poll_seconds: 0.05,
      rules: [rule("gone", ["gone@example.com"]), rule("both", ["gone@example.com", "desk@example.com"])],
    };
    await watch({ config, env, once: true });
    // The watch keeps the lifecycle in its own store: suppress there.
    await addSuppression({ sender: "watch@chainmail.test", email: "gone@example.com" }, { db: store });
    server.add(CONTRACT, [sale(2000, 7)]);
    await watch({ config, env, once: true });

    const mailed = await listOutbox(join(dir, "outbox"));
    expect(mailed.flatMap((m) => m.to)).toEqual(["desk@example.com"]);
    const status = await watchStatus({ config, env, all: true });
    const gone = status.find((s) => s.rule === "gone");
    expect(gone).toMatchObject({ state: "failed", suppressed: [{ email: "gone@example.com", reason: "manual" }] });
    const both = status.find((s) => s.rule === "both");
    expect(both).toMatchObject({ state: "sent", suppressed: [{ email: "gone@example.com", reason: "manual" }] });
    // What went out is recorded in the lifecycle, queued in the outbox.
    const [recorded] = await mailStatus(both!.custom_id, { db: store });
    expect(recorded).toMatchObject({ Email: "desk@example.com", State: "queued", Transport: "outbox" });
  });
});
