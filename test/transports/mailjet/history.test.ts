/**
 * src/transports/mailjet/history.ts on its own, against the local Mailjet server's message history: a CustomID
 * found there is a message that went out (its copies listed as a success); one not found is delivery unknown, never
 * "not sent" (the history may lag); a history that cannot be read throws, without a secret in the error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError, MessageErrorCode } from "../../../src/core/errors.js";
import { stringifyJson } from "../../../src/core/json.js";
import type { RunContext } from "../../../src/core/node.js";
import { postSend } from "../../../src/transports/mailjet/client.js";
import { lookupByCustomId } from "../../../src/transports/mailjet/history.js";
import { testConfig } from "../../support/helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, startMailjet } from "../../upstreams/mailjet.js";

const params = { "user id": API_KEY, password: SECRET_KEY };

describe("lookupByCustomId", () => {
  let mj: MailjetServer;
  let lagging: MailjetServer;
  const ctx = (server: MailjetServer): RunContext => ({
    config: testConfig({ MAILJET_BASE_URL: server.url, MAILJET_MAX_RETRIES: "0" }),
  });
  const send = (server: MailjetServer, customId: string, to: string[]) =>
    postSend(
      stringifyJson({
        Messages: [
          {
            From: { Email: "news@chainmail.test" },
            To: to.map((Email) => ({ Email })),
            TextPart: "x",
            CustomID: customId,
          },
        ],
      }),
      params,
      ctx(server),
    );

  beforeAll(async () => {
    mj = await startMailjet();
    lagging = await startMailjet({ historyLagMs: 3_600_000 });
    await send(mj, "order-1", ["a@example.org", "b@example.org"]);
    await send(mj, "order-2", ["c@example.org"]);
    await send(lagging, "order-3", ["d@example.org"]);
  });
  afterAll(async () => {
    await mj.close();
    await lagging.close();
  });

  it("answers each CustomID found with a success listing every copy (address, UUID, exact MessageID, href)", async () => {
    const found = await lookupByCustomId(["order-1", "order-2"], params, ctx(mj));
    expect([...found.keys()]).toEqual(["order-1", "order-2"]);
    const one = found.get("order-1")!;
    expect(one).toMatchObject({ Status: "success", CustomID: "order-1", Cc: [], Bcc: [] });
    const copies = mj.deliveries.filter((d) => d.customId === "order-1");
    expect(one.To).toEqual(
      copies.map((d) => ({
        Email: d.email,
        MessageUUID: d.uuid,
        MessageID: d.messageId,
        MessageHref: `${mj.url}/v3/REST/message/${d.messageId}`,
      })),
    );
    expect(found.get("order-2")!.To!.map((r) => r.Email)).toEqual(["c@example.org"]);
  });

  it("asks by CustomID with Basic auth, asking for the address and CustomID of each copy", async () => {
    const before = mj.requests.length;
    await lookupByCustomId(["order-2"], params, ctx(mj));
    const request = mj.requests[before]!;
    expect(request.authorization).toBe(`Basic ${Buffer.from(`${API_KEY}:${SECRET_KEY}`).toString("base64")}`);
    expect(mj.requests).toHaveLength(before + 1);
  });

  it("a CustomID not in the history (or not yet) is delivery unknown, never not sent", async () => {
    for (const [server, id] of [
      [mj, "never-sent"],
      [lagging, "order-3"],
    ] as const) {
      const result = (await lookupByCustomId([id], params, ctx(server))).get(id)!;
      expect(result.Status).toBe("error");
      expect(result.Errors!.map((e) => e.ErrorCode)).toEqual([MessageErrorCode.DELIVERY_UNKNOWN]);
      expect(result.Errors![0]!.ErrorMessage).toContain("may lag behind the send");
    }
  });

  it("throws upstream_auth when the history refuses the credentials, with no secret in the error", async () => {
    const wrong = { "user id": API_KEY, password: "not-the-secret-42" };
    const err = await lookupByCustomId(["order-1"], wrong, ctx(mj)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChainmailError);
    expect((err as ChainmailError).code).toBe("upstream_auth");
    expect((err as ChainmailError).shortMessage).toBe(
      "Mailjet's message history answered HTTP 401 for CustomID order-1.",
    );
    const seen = stringifyJson((err as ChainmailError).toPayload());
    expect(seen).not.toContain(wrong.password);
    expect(seen).not.toContain(Buffer.from(`${API_KEY}:${wrong.password}`).toString("base64"));
  });

  it("throws upstream_bad_response for an answer that is not a history", async () => {
    // The local server answers 404 JSON without `Data` on any other path: point the base URL one level down.
    const config = testConfig({ MAILJET_BASE_URL: `${mj.url}/elsewhere`, MAILJET_MAX_RETRIES: "0" });
    await expect(lookupByCustomId(["order-1"], params, { config })).rejects.toMatchObject({
      code: "upstream_bad_response",
      details: { upstream: "Mailjet", status: 404 },
    });
  });
});
