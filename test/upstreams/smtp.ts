/**
 * A real SMTP server on loopback (smtp-server) that records what it received: the envelope and the raw message
 * of every transaction it accepted, parsed with mailparser by the tests. AUTH PLAIN/LOGIN with one user;
 * rules refuse a sender, a recipient or a message, or drop the connection in the middle of a message's DATA.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";

export const SMTP_USER = "mailer";
export const SMTP_PASSWORD = "s3cret-smtp-pa55";

export interface Received {
  from: string;
  to: string[];
  raw: Buffer;
  user: string | undefined;
}

export interface SmtpRules {
  /** Recipients refused at RCPT TO with this reply code (550 unless set). */
  rejectRecipients?: string[];
  rejectRecipientCode?: number;
  /** Senders refused at MAIL FROM. */
  rejectSenders?: string[];
  /** Refuse the content of messages whose subject contains this text (554 after DATA). */
  rejectSubject?: string;
  /** Answer messages whose subject contains this text with 421 and close the session. */
  closeSubject?: string;
  /** Drop the connection halfway through the DATA of the n-th message (1-based, counted from server start). */
  dropDuringData?: number;
  /** Drop the connection right after the n-th MAIL FROM, before any DATA. */
  dropAfterMailFrom?: number;
}

export interface SmtpTestServer {
  url: (auth?: { user: string; pass: string } | null) => string;
  port: number;
  /** Messages the server accepted (250 after DATA), in order. */
  received: Received[];
  /** DATA transfers that started, accepted or not (a dropped one counts). */
  dataStarted: number;
  /** Called when a message is accepted, before the server's 250 reply goes out. */
  onReceived?: (count: number) => void;
  /** SMTP sessions opened. */
  connections: number;
  /** Every AUTH attempt (user, whether it succeeded). */
  logins: { user: string; ok: boolean }[];
  rules: SmtpRules;
  close(): Promise<void>;
}

export async function startSmtp(
  options: { secure?: boolean; authRequired?: boolean; rules?: SmtpRules } = {},
): Promise<SmtpTestServer> {
  const state: SmtpTestServer = {
    url: () => "",
    port: 0,
    received: [],
    dataStarted: 0,
    connections: 0,
    logins: [],
    rules: options.rules ?? {},
    close: async () => undefined,
  };
  let mailFroms = 0;
  const serverOptions: SMTPServerOptions = {
    secure: options.secure ?? false,
    // No STARTTLS on the plain server: the client would upgrade and then refuse smtp-server's self-signed cert.
    disabledCommands: options.secure ? [] : ["STARTTLS"],
    authOptional: !(options.authRequired ?? true),
    allowInsecureAuth: true,
    logger: false,
    size: 25 * 1024 * 1024,
    onConnect(_session, callback) {
      state.connections += 1;
      callback();
    },
    onAuth(auth, _session, callback) {
      const ok = auth.username === SMTP_USER && auth.password === SMTP_PASSWORD;
      state.logins.push({ user: auth.username ?? "", ok });
      if (!ok) {
        // Servers in the wild echo the attempted credentials; the client must scrub them.
        const err = Object.assign(new Error(`Invalid username or password (${auth.password})`), { responseCode: 535 });
        return callback(err);
      }
      callback(null, { user: auth.username });
    },
    onMailFrom(address, session, callback) {
      mailFroms += 1;
      if (state.rules.dropAfterMailFrom === mailFroms) {
        const connection = [...server.connections].find((c) => c.id === session.id);
        (connection as unknown as { _socket: { destroy(): void } })._socket.destroy();
        return;
      }
      if (state.rules.rejectSenders?.includes(address.address)) {
        return callback(Object.assign(new Error(`Sender ${address.address} not allowed`), { responseCode: 553 }));
      }
      callback();
    },
    onRcptTo(address, _session, callback) {
      if (state.rules.rejectRecipients?.includes(address.address)) {
        const code = state.rules.rejectRecipientCode ?? 550;
        return callback(Object.assign(new Error(`Mailbox ${address.address} unavailable`), { responseCode: code }));
      }
      callback();
    },
    onData(stream, session, callback) {
      state.dataStarted += 1;
      const n = state.dataStarted;
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (state.rules.dropDuringData === n && size > 0) {
          const connection = [...server.connections].find((c) => c.id === session.id);
          (connection as unknown as { _socket: { destroy(): void } })._socket.destroy();
        }
      });
      stream.on("end", () => {
        if (state.rules.dropDuringData === n) return;
        const raw = Buffer.concat(chunks);
        const subject = /^Subject: (.*)$/m.exec(raw.toString("utf8"))?.[1] ?? "";
        if (state.rules.closeSubject && subject.includes(state.rules.closeSubject)) {
          return callback(Object.assign(new Error("Shutting down, try again later"), { responseCode: 421 }));
        }
        if (state.rules.rejectSubject && subject.includes(state.rules.rejectSubject)) {
          return callback(Object.assign(new Error("Message content rejected"), { responseCode: 554 }));
        }
        state.received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          user: session.user as string | undefined,
        });
        state.onReceived?.(state.received.length);
        callback(null, `OK: queued as Q${state.received.length}`);
      });
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  state.port = port;
  state.url = (auth = { user: SMTP_USER, pass: SMTP_PASSWORD }) => {
    const login = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : "";
    return `${options.secure ? "smtps" : "smtp"}://${login}127.0.0.1:${port}`;
  };
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
