/**
 * Hook for a later step: mail a digest of the demo's sales through the outbox transport (EMAIL_TRANSPORT=outbox,
 * files under ./data/demo/outbox), so `npm start` shows the email side too. Not wired yet: the demo calls it
 * and prints what it returns; it returns undefined (nothing sent) until the email-send node takes this over.
 */
import type { Config } from "../core/config.js";
import type { TransactionRecord } from "../schemas/transactions.js";

export interface DigestResult {
  /** One line for the demo's output, e.g. "1 message written to data/demo/outbox". */
  summary: string;
}

export async function sendSalesDigest(_sales: TransactionRecord[], _config: Config): Promise<DigestResult | undefined> {
  return undefined;
}
