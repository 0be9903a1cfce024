/**
 * What the node files share, built once into dist/chainmail.js with chainmail's workflow kit bundled in; each node
 * file (dist/nodes/<node>.js) requires it, so the kit, its connection pool and its caches exist once per process.
 * A node file imports chainmail's parts from here only, never from chainmail itself (that would bundle them twice).
 */
export { guardedGet } from "../../../../src/enrichment/metadata-fetch.js";
export {
  type ActivityCursor,
  type ActivityTarget,
  activityDetails,
  detailsCache,
  type EnrichmentCache,
  emailSend,
  MAX_EVENTS_PER_POLL,
  type MailEventCursor,
  MailjetEventKinds,
  nftTransactionsByContract,
  nftTransactionsByToken,
  nftTransactionsOnChain,
  PageError,
  parseRecordFilter,
  pollActivity,
  pollInterval,
  pollMailEvents,
  type RecordFilter,
  scrub,
  toErrorPayload,
  withExactStrings,
} from "../../../../src/workflow/index.js";
export * from "./poll.js";
export * from "./run.js";
export * from "./settings.js";
export * from "./status.js";
