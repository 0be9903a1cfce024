/**
 * chainmail as a library: `import { nodes, runNode } from "chainmail"`.
 *
 * Every node is a plain object; `runNode(node or id, input)` validates, runs and resolves to the output object
 * keyed by the ports that fired, both typed from the node's port schemas. `pages`/`records` walk every page of a
 * retriever.
 */

import type { IndexChainOptions, IndexChainResult } from "./ingest/index.js";
import { closeNftSources } from "./sources/index.js";

export { type Config, loadConfig, type RetryPolicy } from "./core/config.js";
export {
  ChainmailError,
  ErrorCode,
  type ErrorPayload,
  httpStatusOf,
  InvalidInputError,
  isRetryableCode,
  type Violation,
} from "./core/errors.js";
export { type ExactInteger, parseJson, stringifyJson } from "./core/json.js";
export {
  type AnyNode,
  defineNode,
  describeNode,
  type Given,
  type Logger,
  type NodeDefinition,
  type NodeInput,
  type NodeOutput,
  type NodeResult,
  type RunContext,
} from "./core/node.js";
export { MAX_PAGE_SIZE, type Page, PageError, type PageInfo, type PaginateOptions } from "./core/paginate.js";
export { type DigestOptions, salesDigestRequest } from "./demo/digest.js";
export {
  addSuppression,
  listSuppressions,
  type MailOptions,
  mailStatus,
  removeSuppression,
} from "./mail/api.js";
export type { MessageView, Suppression } from "./mail/store.js";
export * from "./nodes/index.js";
export { type InputOf, type OutputOf, pages, records, runNode } from "./nodes/run.js";
export type { RawResponse } from "./schemas/common.js";
export type { EmailMessage, EmailParams, EmailRequest, MessageResult, MessagesSent } from "./schemas/email.js";
export type {
  ByContractQuery,
  ByTokenQuery,
  NftParams,
  OnChainQuery,
  RetrieverResult,
  TransactionRecord,
} from "./schemas/transactions.js";
export { parseWatchConfig, type WatchConfig, WatchConfigSchema } from "./watch/config.js";
export type { PreviewEmail, WatchMailStatus, WatchOptions, WatchSummary } from "./watch/watch.js";
export type { IndexChainOptions, IndexChainResult };

/**
 * Watches NFT activity and emails it (`chainmail watch`): runs until `signal` aborts (or one poll with `once`).
 * Loads the watch (and its SQLite driver) only when called.
 */
export async function watch(options: import("./watch/watch.js").WatchOptions) {
  return (await import("./watch/watch.js")).watch(options);
}

/** What the next poll of a watch would send, without writing or sending (`chainmail watch --dry-run`). */
export async function previewWatch(options: Omit<import("./watch/watch.js").WatchOptions, "once" | "logger">) {
  return (await import("./watch/watch.js")).previewWatch(options);
}

/**
 * Closes what runs left open for the next one: the own index's database connections (NFT_SOURCE=index). Call it
 * when done with the nodes, e.g. before a program or a test ends; a later run opens them again. Not needed for a
 * process to exit: idle connections never keep it alive.
 */
export async function close(): Promise<void> {
  await closeNftSources();
}

/** A watch's emails that did not go out (`all`: every email), from its journal (`chainmail watch status`). */
export async function watchStatus(options: Parameters<typeof import("./watch/watch.js").watchStatus>[0]) {
  return (await import("./watch/watch.js")).watchStatus(options);
}

/** Sends a watch's delivery-unknown or failed emails again at its next poll (`chainmail watch resend`). */
export async function resendWatchMails(options: Parameters<typeof import("./watch/watch.js").resendWatchMails>[0]) {
  return (await import("./watch/watch.js")).resendWatchMails(options);
}

/** Builds and follows the own index (`NFT_SOURCE=index`); loads the SQLite driver only when called. */
export async function indexChain(options: IndexChainOptions): Promise<IndexChainResult> {
  const indexer = await import("./ingest/index.js");
  return indexer.indexChain(options);
}
