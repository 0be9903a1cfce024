/**
 * The mail store a process works with, opened once per database and shared: the service's event route, every
 * `email-send` run and the CLI. CHAINMAIL_MAIL_DB names it; unset, nothing is kept and nobody is suppressed (a
 * watch passes its own store instead).
 */
import { setting } from "../core/env.js";
import { type MailStore, openMailStore } from "./store.js";

type Env = Readonly<Record<string, string | undefined>>;

const open = new Map<string, Promise<MailStore>>();

/** The store `target` names (CHAINMAIL_MAIL_DB by default), opened on first use; undefined when none is set. */
export function mailStoreOf(env: Env, target = setting(env, "CHAINMAIL_MAIL_DB")): Promise<MailStore> | undefined {
  if (target === undefined) return undefined;
  const softBounceLimit = setting(env, "CHAINMAIL_SOFT_BOUNCE_LIMIT");
  const key = `${target}\n${softBounceLimit}`;
  let store = open.get(key);
  if (!store) {
    store = openMailStore(target, { softBounceLimit });
    // A failed open is tried again next time, not remembered.
    store.catch(() => open.delete(key));
    open.set(key, store);
  }
  return store;
}

/** Closes every store opened here (a later use opens it again). */
export async function closeMailStores(): Promise<void> {
  const stores = [...open.values()];
  open.clear();
  await Promise.allSettled(stores.map(async (store) => (await store).close()));
}
