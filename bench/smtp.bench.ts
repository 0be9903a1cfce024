/**
 * Mail transports smtp and outbox: 2,000 one-recipient messages (text + HTML, one 2 KiB attachment) through
 * `runNode(emailSend, …)`. Rendering alone is timed first; then smtp against a local smtp-server in the same
 * process (one session, messages one by one, so wall ≈ messages × one transaction), then the outbox into a
 * temporary directory. Peak memory is sampled every 5 ms (the SMTP server's share is included).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/core/config.js";
import { runNode } from "../src/core/node.js";
import { emailSend } from "../src/nodes/index.js";
import { renderRequest } from "../src/transports/mime/render.js";
import { listOutbox } from "../src/transports/outbox/store.js";
import { startSmtp } from "../test/upstreams/smtp.js";
import { measure } from "./measure.js";

const MESSAGES = 2_000;
const attachment = Buffer.alloc(2048, "chainmail ").toString("base64");

const messages = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({
    From: { Email: "news@chainmail.test", Name: "Chainmail" },
    To: [{ Email: `${tag}-${i}@example.org`, Name: `Reader ${i}` }],
    Subject: "Your weekly digest for {{var:name}}",
    TextPart: "Hello {{var:name}}, here is your digest.",
    HTMLPart: "<p>Hello {{var:name}}, here is your <b>digest</b>.</p>",
    TemplateLanguage: true as const,
    Variables: { name: `reader ${i}` },
    Attachments: [{ ContentType: "text/plain", Filename: "digest.txt", Base64Content: attachment }],
    CustomID: `${tag}-${i}`,
  }));

const line = (what: string, r: { wall: number; rss: string; heap: string }) =>
  console.log(
    `${what}: ${MESSAGES} messages, wall ${r.wall.toFixed(0)} ms, ${((MESSAGES / r.wall) * 1000).toFixed(0)} msg/s, ` +
      `${(r.wall / MESSAGES).toFixed(2)} ms/message, peak RSS ${r.rss}, peak heap ${r.heap}`,
  );

export default async function smtpBench(): Promise<void> {
  await renderRequest({ Messages: messages(50, "warm") });
  const rendered = await measure(() => renderRequest({ Messages: messages(MESSAGES, "render") }));
  const bytes = rendered.value.reduce((t, r) => t + ("message" in r ? r.message.raw.length : 0), 0);
  line(`render only (${(bytes / MESSAGES).toFixed(0)} bytes/message)`, rendered);

  const server = await startSmtp();
  try {
    const config = loadConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url() });
    await runNode(emailSend, { request: { Messages: messages(50, "warm") } }, { config });
    const before = server.received.length;
    const smtp = await measure(() =>
      runNode(emailSend, { request: { Messages: messages(MESSAGES, "smtp") } }, { config }),
    );
    const ok = smtp.value["messages sent"]?.Messages.filter((m) => m.Status === "success").length ?? 0;
    if (smtp.value.error || ok !== MESSAGES || server.received.length - before !== MESSAGES)
      throw new Error(`smtp bench failed: ${smtp.value.error?.error ?? `${ok} sent`}`);
    line("smtp (one session, loopback smtp-server)", smtp);
  } finally {
    await server.close();
  }

  const dir = await mkdtemp(join(tmpdir(), "chainmail-bench-outbox-"));
  try {
    const config = loadConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: dir });
    const outbox = await measure(() =>
      runNode(emailSend, { request: { Messages: messages(MESSAGES, "outbox") } }, { config }),
    );
    const stored = (await listOutbox(dir)).length;
    if (outbox.value.error || stored !== MESSAGES) throw new Error(`outbox bench failed: ${stored} stored`);
    line("outbox (.eml + index line per message)", outbox);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
