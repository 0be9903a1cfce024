/**
 * src/transports/smtp/connection.ts on its own: SMTP_URL read into a target, and one SMTP session against the real
 * SMTP server on loopback (test/upstreams/smtp.ts): login, accepted and refused recipients, and for a failed send
 * whether its DATA had started (not sent vs delivery unknown), the server's refusal told apart from a lost session.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError } from "../../../src/core/errors.js";
import { parseSmtpUrl, SendFailure, SmtpSession, type SmtpTarget } from "../../../src/transports/smtp/connection.js";
import { SMTP_PASSWORD, SMTP_USER, type SmtpTestServer, startSmtp } from "../../upstreams/smtp.js";

describe("parseSmtpUrl", () => {
  it("smtp:// defaults to port 587 with STARTTLS when offered; smtps:// to 465 with TLS from the start", () => {
    expect(parseSmtpUrl("smtp://mail.example.test")).toEqual({
      host: "mail.example.test",
      port: 587,
      secure: false,
      user: undefined,
      pass: undefined,
      requireTLS: false,
      ignoreTLS: false,
      rejectUnauthorized: true,
    });
    expect(parseSmtpUrl("smtps://mail.example.test")).toMatchObject({ port: 465, secure: true });
    expect(parseSmtpUrl("SMTPS://mail.example.test:2465")).toMatchObject({ port: 2465, secure: true });
  });

  it("decodes the login, unwraps an IPv6 host and reads the query options", () => {
    const target = parseSmtpUrl(
      "smtp://us%40er:p%3Ass%2Fw@[::1]:2525?requireTLS=TRUE&ignoreTLS=yes&tls.rejectUnauthorized=false",
    );
    expect(target).toEqual({
      host: "::1",
      port: 2525,
      secure: false,
      user: "us@er",
      pass: "p:ss/w",
      requireTLS: true,
      ignoreTLS: true,
      rejectUnauthorized: false,
    });
    expect(parseSmtpUrl("smtp://h?requireTLS=0&ignoreTLS=no")).toMatchObject({ requireTLS: false, ignoreTLS: false });
  });

  it("refuses what is not a URL, or another scheme, naming the setting and never the password", () => {
    for (const text of ["not a url with s3cret", "http://user:s3cret@mail.example.test"]) {
      let err: unknown;
      try {
        parseSmtpUrl(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ChainmailError);
      expect((err as ChainmailError).code).toBe("invalid_input");
      expect((err as ChainmailError).details).toEqual({ setting: "SMTP_URL" });
      expect(JSON.stringify((err as ChainmailError).toPayload())).not.toContain("s3cret");
    }
    expect(() => parseSmtpUrl("http://h")).toThrow("Setting SMTP_URL has scheme http: but must be smtp: or smtps:.");
  });
});

describe("SmtpSession against a real SMTP server", () => {
  let server: SmtpTestServer;
  let target: SmtpTarget;
  const auth = { user: SMTP_USER, pass: SMTP_PASSWORD };
  const raw = (subject: string) =>
    Buffer.from(`From: s@chainmail.test\r\nTo: a@example.test\r\nSubject: ${subject}\r\n\r\nHello\r\n`);
  const sessions: SmtpSession[] = [];
  const open = async (login: typeof auth | undefined = auth) => {
    const session = new SmtpSession(target, 5000);
    sessions.push(session);
    await session.open(login);
    return session;
  };
  const failureOf = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error("expected the send to fail");
      },
      (err: unknown) => {
        expect(err).toBeInstanceOf(SendFailure);
        return err as SendFailure;
      },
    );

  beforeAll(async () => {
    server = await startSmtp({
      rules: { rejectRecipients: ["gone@example.test"], rejectSubject: "SPAM", dropAfterMailFrom: 4 },
    });
    target = parseSmtpUrl(server.url(null));
  });
  afterAll(async () => {
    for (const session of sessions) session.close();
    await server.close();
  });

  it("logs in, sends, and says the moment DATA started; the server's reply and accepted recipients come back", async () => {
    const session = await open();
    expect(server.logins.at(-1)).toEqual({ user: SMTP_USER, ok: true });
    let dataStartedAt = -1;
    const sent = await session.send(
      { from: "s@chainmail.test", to: ["a@example.test", "gone@example.test"] },
      raw("first"),
      () => {
        dataStartedAt = server.received.length;
      },
    );
    // onData ran before the server had the message.
    expect(dataStartedAt).toBe(0);
    expect(sent.accepted).toEqual(["a@example.test"]);
    expect(sent.rejected.map((e) => [e.recipient, e.responseCode])).toEqual([["gone@example.test", 550]]);
    expect(sent.reply).toMatch(/^250 .*queued as Q1/);
    expect(server.received[0]!.to).toEqual(["a@example.test"]);
    expect(session.lastReply).toMatch(/^250/);
    session.close();
    expect(session.closed).toBe(true);
  });

  it("a refused message is the server's answer after DATA started: upstream_rejected with its reply code", async () => {
    const session = await open();
    const failure = await failureOf(session.send({ from: "s@chainmail.test", to: ["a@example.test"] }, raw("SPAM!")));
    expect(failure.code).toBe("upstream_rejected");
    expect(failure.dataStarted).toBe(true);
    expect(failure.details).toEqual({ data_started: true, status: 554 });
    // RSET: the same session sends the next message.
    await session.reset();
    const next = await session.send({ from: "s@chainmail.test", to: ["a@example.test"] }, raw("after reset"));
    expect(next.accepted).toEqual(["a@example.test"]);
    session.close();
  });

  it("a session lost before DATA: upstream_unreachable with data_started false, and the session is closed", async () => {
    // The server drops its fourth MAIL FROM: the three before were sent above.
    const session = await open();
    let onData = false;
    const failure = await failureOf(
      session.send({ from: "s@chainmail.test", to: ["a@example.test"] }, raw("dropped"), () => {
        onData = true;
      }),
    );
    expect(failure.code).toBe("upstream_unreachable");
    expect(failure.dataStarted).toBe(false);
    expect(failure.details).toEqual({ data_started: false });
    expect(onData).toBe(false);
    expect(session.closed).toBe(true);
  });

  it("a wrong login fails open() with nodemailer's EAUTH", async () => {
    const err = await open({ user: SMTP_USER, pass: "wrong-password-1" }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("EAUTH");
    expect(server.logins.at(-1)).toEqual({ user: SMTP_USER, ok: false });
  });

  it("a server that is not there fails open()", async () => {
    const gone = await startSmtp();
    const port = gone.port;
    await gone.close();
    const session = new SmtpSession({ ...target, port }, 5000);
    sessions.push(session);
    await expect(session.open(undefined)).rejects.toMatchObject({ originalCode: "ECONNREFUSED" });
  });
});

describe("SmtpSession: a session lost during DATA", () => {
  it("is delivery unknown: data_started true", async () => {
    const server = await startSmtp({ rules: { dropDuringData: 1 } });
    const session = new SmtpSession(parseSmtpUrl(server.url(null)), 5000);
    try {
      await session.open({ user: SMTP_USER, pass: SMTP_PASSWORD });
      const body = Buffer.from(`Subject: big\r\n\r\n${"x".repeat(200_000)}\r\n`);
      const err = await session.send({ from: "s@chainmail.test", to: ["a@example.test"] }, body).catch((e) => e);
      expect(err).toBeInstanceOf(SendFailure);
      expect((err as SendFailure).dataStarted).toBe(true);
      expect((err as SendFailure).code).toBe("upstream_unreachable");
      expect(server.received).toHaveLength(0);
    } finally {
      session.close();
      await server.close();
    }
  });
});
