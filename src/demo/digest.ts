/**
 * A readable digest of NFT sales as one email request (text and HTML alternatives), for the demo to send through
 * any mail transport. Only `sale` records are listed; the others are counted out.
 */
import { loadConfig } from "../core/config.js";
import { runNode } from "../core/node.js";
import { emailSend } from "../nodes/index.js";
import type { EmailRequest } from "../schemas/email.js";
import type { TransactionRecord } from "../schemas/transactions.js";

type Sale = Extract<TransactionRecord, { type: "sale" }>;

/** `0x1234…abcd` for an address; a short text stays whole. */
export const shortAddress = (address: string | undefined) =>
  address && address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : (address ?? "?");

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function amount(value: number, digits = 4): string {
  return value.toLocaleString("en-US", { maximumFractionDigits: digits });
}

function price(sale: Sale): string {
  const p = sale.price_details;
  const asset = p.asset_type === "ETH" ? "ETH" : `${p.asset_type} ${shortAddress(p.contract_address)}`;
  const usd = typeof p.price_usd === "number" ? ` ($${amount(p.price_usd, 2)})` : "";
  return `${p.price === undefined ? "price unknown" : amount(p.price)} ${asset}${usd}`;
}

export interface DigestOptions {
  from: string;
  to: string;
  /** Shown in the subject and heading; default "NFT sales digest". */
  title?: string;
}

export function salesDigestRequest(records: TransactionRecord[], options: DigestOptions): EmailRequest {
  const sales = records.filter((r): r is Sale => r.type === "sale");
  const title = options.title ?? "NFT sales digest";
  const eth = sales
    .filter((s) => s.price_details.asset_type === "ETH")
    .reduce((t, s) => t + (s.price_details.price ?? 0), 0);
  const usd = sales.reduce((t, s) => t + (s.price_details.price_usd ?? 0), 0);
  const summary = sales.length
    ? `${sales.length} sale${sales.length === 1 ? "" : "s"}, ${amount(eth)} ETH in ETH sales, $${amount(usd, 2)} in total`
    : "No sales in this period.";

  const rows = sales.map((s) => ({
    date: s.transaction_date.replace("T", " "),
    token: `${shortAddress(s.nft.contract_address)} #${s.nft.token_id}`,
    quantity: String(s.quantity),
    price: price(s),
    seller: shortAddress(s.seller_address),
    buyer: shortAddress(s.buyer_address),
    marketplace: s.marketplace,
    tx: s.transaction_hash,
    block: String(s.block_number),
  }));

  const text = digestText(title, summary, rows);
  const html = digestHtml(title, summary, rows);

  return {
    Messages: [
      {
        From: { Email: options.from, Name: "chainmail" },
        To: [{ Email: options.to }],
        Subject: `${title}: ${sales.length} sale${sales.length === 1 ? "" : "s"}`,
        TextPart: text,
        HTMLPart: html,
        CustomID: `sales-digest-${new Date().toISOString().slice(0, 10)}`,
      },
    ],
  };
}

type DigestRow = Record<
  "date" | "token" | "quantity" | "price" | "seller" | "buyer" | "marketplace" | "tx" | "block",
  string
>;

function digestText(title: string, summary: string, rows: DigestRow[]): string {
  return [
    `${title}: ${summary}`,
    "",
    ...rows.map(
      (r, i) =>
        `${i + 1}. ${r.date} UTC  ${r.token} x${r.quantity}  ${r.price}\n` +
        `   ${r.seller} -> ${r.buyer} on ${r.marketplace}, block ${r.block}, tx ${r.tx}`,
    ),
    "",
    "Sent by chainmail.",
  ].join("\n");
}

function digestHtml(title: string, summary: string, rows: DigestRow[]): string {
  const cell = (value: string) => `<td style="padding:4px 8px;border-bottom:1px solid #ddd">${escapeHtml(value)}</td>`;
  const head = ["Date (UTC)", "Token", "Qty", "Price", "Seller", "Buyer", "Marketplace", "Block"]
    .map((h) => `<th style="text-align:left;padding:4px 8px">${h}</th>`)
    .join("");
  const row = (r: DigestRow) =>
    `<tr>${[r.date, r.token, r.quantity, r.price, r.seller, r.buyer, r.marketplace, r.block].map(cell).join("")}</tr>`;
  return [
    `<h1 style="font-family:sans-serif">${escapeHtml(title)}</h1>`,
    `<p style="font-family:sans-serif">${escapeHtml(summary)}</p>`,
    rows.length
      ? `<table style="font-family:sans-serif;border-collapse:collapse"><tr>${head}</tr>${rows.map(row).join("")}</table>`
      : "",
    '<p style="font-family:sans-serif;color:#777">Sent by chainmail.</p>',
  ].join("\n");
}

export interface DigestResult {
  /** One line for the demo's output: what was written and how to read it. */
  summary: string;
}

/**
 * Sends the digest through the `email-send` node with the outbox transport, so `npm start` shows the email side
 * with no mail server: the message lands as an .eml file under `outboxDir`.
 */
export async function sendSalesDigest(
  sales: TransactionRecord[],
  outboxDir: string,
  env: Record<string, string | undefined> = {},
): Promise<DigestResult> {
  const config = loadConfig({ ...env, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outboxDir });
  const request = salesDigestRequest(sales, { from: "digest@chainmail.local", to: "you@example.com" });
  const out = await runNode(emailSend, { request }, { config });
  if (out.error) return { summary: `not sent: ${out.error.error}` };
  return {
    summary: `written to the outbox in ${outboxDir} (read it: chainmail outbox list --dir ${outboxDir}; chainmail outbox show <id> --dir ${outboxDir})`,
  };
}
