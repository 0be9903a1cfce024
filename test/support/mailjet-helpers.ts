/**
 * The local Mailjet (test/upstreams/mailjet.ts) as the tests that send through it share it: one per file, and after
 * each test no address delivered twice and no fault left queued, so a retry that sent again or a fault a test set
 * up but never reached fails that test.
 */
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { type MailjetServer, startMailjet } from "../upstreams/mailjet.js";

/** Starts the file's Mailjet before its tests (handed to `use`), checks it after each, closes it after all. */
export function useMailjet(use: (server: MailjetServer) => void): void {
  let server: MailjetServer;
  beforeAll(async () => {
    server = await startMailjet();
    use(server);
  });
  afterEach(() => {
    expect(server.duplicates()).toEqual([]);
    expect(server.pendingFaults()).toBe(0);
  });
  afterAll(() => server?.close());
}
