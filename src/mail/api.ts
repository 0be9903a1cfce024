/**
 * The mail lifecycle as library calls (and what `chainmail mail` runs): a message's state, and the suppression
 * list read and changed by hand. Each works on CHAINMAIL_MAIL_DB's store, or the `db` given.
 */
import { setting } from "../core/env.js";
import { ChainmailError, InvalidInputError } from "../core/errors.js";
import { isEmailAddress } from "../transports/message-rules.js";
import { mailStoreOf } from "./open.js";
import { ANY_SENDER, type MailStore, type MessageView, type Suppression } from "./store.js";

export interface MailOptions {
  /** An SQLite file or a postgres:// URL; default CHAINMAIL_MAIL_DB. */
  db?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
}

async function storeFor(options: MailOptions): Promise<MailStore> {
  const env = options.env ?? process.env;
  const store = mailStoreOf(env, options.db ?? setting(env, "CHAINMAIL_MAIL_DB"));
  if (!store) {
    throw new ChainmailError("NOT_CONFIGURED", "No mail lifecycle store: CHAINMAIL_MAIL_DB is not set.", {
      hint: "Set CHAINMAIL_MAIL_DB (or pass --db) to the SQLite file or postgres:// URL the messages were recorded in.",
      details: { setting: "CHAINMAIL_MAIL_DB" },
    });
  }
  return store;
}

/** Every recipient's message under a MessageID, a MessageUUID or a CustomID, with its state and events. */
export async function mailStatus(id: string, options: MailOptions = {}): Promise<MessageView[]> {
  return (await storeFor(options)).messages(id);
}

export async function listSuppressions(
  filter: { sender?: string | undefined; email?: string | undefined } = {},
  options: MailOptions = {},
): Promise<Suppression[]> {
  return (await storeFor(options)).suppressions(filter);
}

/** Puts a recipient on a sender's list (`*`: every sender's) by hand; resolves to whether the list changed. */
export async function addSuppression(entry: { sender: string; email: string }, options: MailOptions = {}) {
  checkEntry(entry);
  return (await storeFor(options)).suppress({ ...entry, reason: "manual" });
}

/** Takes a recipient off a sender's list: the one explicit way back; resolves to whether it was there. */
export async function removeSuppression(entry: { sender: string; email: string }, options: MailOptions = {}) {
  checkEntry(entry);
  return (await (await storeFor(options)).unsuppress(entry.sender, entry.email)) > 0;
}

function checkEntry({ sender, email }: { sender: string; email: string }): void {
  const violations = [];
  if (!isEmailAddress(email))
    violations.push({
      field: "email",
      value: email.slice(0, 256),
      rule: "an email address",
      message: `email = ${JSON.stringify(email.slice(0, 256))} is invalid: must be an email address`,
    });
  if (sender !== ANY_SENDER && !isEmailAddress(sender))
    violations.push({
      field: "sender",
      value: sender.slice(0, 256),
      rule: "an email address or *",
      message: `sender = ${JSON.stringify(sender.slice(0, 256))} is invalid: must be an email address, or * for every sender`,
    });
  if (violations.length) throw new InvalidInputError(violations);
}
