/**
 * One SMTP session as promises over nodemailer's SMTPConnection, knowing for each message whether its DATA had
 * started when something failed: that is what decides between "not sent" (safe to send again) and "delivery
 * unknown" (never sent again automatically).
 */
import { Readable } from "node:stream";
import type { NodemailerError } from "nodemailer/lib/errors";
import SMTPConnection from "nodemailer/lib/smtp-connection";
import { ChainmailError } from "../../core/errors.js";

export interface SmtpTarget {
  host: string;
  port: number;
  secure: boolean;
  user: string | undefined;
  pass: string | undefined;
  requireTLS: boolean;
  ignoreTLS: boolean;
  rejectUnauthorized: boolean;
}

const truthy = (value: string | null) => value !== null && ["1", "true", "yes"].includes(value.toLowerCase());

/**
 * `smtp://[user:pass@]host[:port]` (STARTTLS when offered, port 587) or `smtps://…` (TLS from the start, port 465).
 * Query options: `requireTLS=true`, `ignoreTLS=true`, `tls.rejectUnauthorized=false` (self-signed test servers).
 */
export function parseSmtpUrl(text: string): SmtpTarget {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ChainmailError("INVALID_INPUT", "Setting SMTP_URL is not a URL.", {
      hint: "Use smtp://user:password@host:587 or smtps://user:password@host:465.",
      details: { setting: "SMTP_URL" },
    });
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") {
    throw new ChainmailError(
      "INVALID_INPUT",
      `Setting SMTP_URL has scheme ${url.protocol} but must be smtp: or smtps:.`,
      {
        details: { setting: "SMTP_URL" },
      },
    );
  }
  const secure = url.protocol === "smtps:";
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    user: url.username ? decodeURIComponent(url.username) : undefined,
    pass: url.password ? decodeURIComponent(url.password) : undefined,
    requireTLS: truthy(url.searchParams.get("requireTLS")),
    ignoreTLS: truthy(url.searchParams.get("ignoreTLS")),
    rejectUnauthorized: url.searchParams.get("tls.rejectUnauthorized") !== "false",
  };
}

export type SmtpError = NodemailerError;

export interface SendResult {
  accepted: string[];
  rejected: SmtpError[];
  /** The server's final reply to the message. */
  reply: string;
}

/** A failed send: `dataStarted` is true once the server had accepted DATA (the message may have been delivered). */
export class SendFailure extends ChainmailError {
  constructor(
    readonly smtp: SmtpError,
    readonly dataStarted: boolean,
  ) {
    // A 4xx/5xx reply is the server refusing; anything else is the session failing. transport.ts words it for the caller.
    const refused = (smtp.responseCode ?? 0) >= 400 && (smtp.responseCode ?? 0) < 600;
    super(refused ? "UPSTREAM_REJECTED" : "UPSTREAM_UNREACHABLE", smtp.message, {
      cause: smtp,
      details: { data_started: dataStarted, ...(smtp.responseCode ? { status: smtp.responseCode } : {}) },
    });
  }
}

export class SmtpSession {
  private readonly connection: SMTPConnection;
  /** Set once the socket is gone; later sends fail at once. */
  closed = false;

  constructor(target: SmtpTarget, timeoutMs: number) {
    this.connection = new SMTPConnection({
      host: target.host,
      port: target.port,
      secure: target.secure,
      requireTLS: target.requireTLS,
      ignoreTLS: target.ignoreTLS,
      tls: { rejectUnauthorized: target.rejectUnauthorized },
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
      socketCloseTimeout: 1000,
      // Connecting to a server on loopback is what a local relay or a test server is.
      allowInternalNetworkInterfaces: true,
    });
    // Errors also reach the pending callback; without a listener an EventEmitter 'error' would throw.
    this.connection.on("error", () => {
      this.closed = true;
    });
    this.connection.on("end", () => {
      this.closed = true;
    });
  }

  /** Last reply line the server sent (for `response`). */
  get lastReply(): string | undefined {
    return this.connection.lastServerResponse || undefined;
  }

  /** Connects (TLS or STARTTLS as configured) and logs in when the server offers AUTH and a login is given. */
  async open(auth: { user: string; pass: string } | undefined): Promise<void> {
    // A failure to connect is only emitted as 'error' (the connect callback is for success or a silent close).
    let onError: (err: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => {
      onError = reject;
      this.connection.once("error", onError);
    });
    try {
      await Promise.race([
        failed,
        new Promise<void>((resolve, reject) => this.connection.connect((err) => (err ? reject(err) : resolve()))),
      ]);
      if (!auth || !this.connection.allowsAuth) return;
      await Promise.race([
        failed,
        new Promise<void>((resolve, reject) =>
          this.connection.login({ user: auth.user, pass: auth.pass }, (err) => (err ? reject(err) : resolve())),
        ),
      ]);
    } finally {
      this.connection.off("error", onError);
      failed.catch(() => undefined);
    }
  }

  /**
   * Sends one message. Rejects with a `SendFailure` that says whether DATA had started; `onData` is called the
   * moment it starts.
   */
  send(envelope: { from: string; to: string[] }, raw: Buffer, onData?: () => void): Promise<SendResult> {
    let dataStarted = false;
    // The body is a stream so we learn when nodemailer starts reading it: only after the server's 354.
    const body = new Readable({
      read() {
        dataStarted = true;
        onData?.();
        this.push(raw);
        this.push(null);
      },
    });
    return new Promise((resolve, reject) => {
      this.connection.send({ ...envelope, size: raw.length }, body, (err, info) => {
        if (err || !info) {
          reject(new SendFailure((err ?? new Error("no result")) as SmtpError, dataStarted));
          return;
        }
        resolve({
          accepted: info.accepted,
          rejected: (info.rejectedErrors ?? []) as SmtpError[],
          reply: info.response,
        });
      });
    });
  }

  /** Ends a failed transaction (RSET) so the next message starts clean. */
  reset(): Promise<void> {
    return new Promise((resolve, reject) => this.connection.reset((err) => (err ? reject(err) : resolve())));
  }

  close(): void {
    if (!this.closed) this.connection.quit();
    this.closed = true;
    this.connection.close();
  }
}
