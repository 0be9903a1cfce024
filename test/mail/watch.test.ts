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
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { saleIn } from "../upstreams/nftport-data.js";

const CONTRACT = "0x4444444444444444444444444444444444444444";
const sale = (block: number, tokenId: number) => saleIn(CONTRACT, block, tokenId);

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
