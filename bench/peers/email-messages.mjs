/**
 * The batch both email clients send (bench/email-send.mjs and bench/peers/node-mailjet-send.mjs): `count`
 * one-recipient messages, each with its own address and CustomID, built the same way in each process so that the
 * input costs both the same memory.
 */
export function benchMessages(count, tag = "m") {
  const messages = new Array(count);
  for (let i = 0; i < count; i++) {
    messages[i] = {
      From: { Email: "news@chainmail.test", Name: "Chainmail" },
      To: [{ Email: `${tag}-${i}@example.org`, Name: `Reader ${i}` }],
      Subject: "Your weekly digest",
      TextPart: `Hello reader ${i}, here is your digest.`,
      CustomID: `${tag}-${i}`,
    };
  }
  return messages;
}

/** The summary line each client prints last: how long the send itself took and what came back. */
export function report(started, results, calls) {
  const ms = performance.now() - started;
  const sent = results.filter((r) => r?.Status === "success").length;
  process.stdout.write(`${JSON.stringify({ sendMs: ms, sent, calls })}\n`);
}
