/**
 * The own index's face: the store `chainmail index` writes (SQLite or PostgreSQL), its record, the readers told of
 * each commit, the source that reads it for the retrievers, and the copy between databases. Nothing outside reaches
 * its other files.
 */

export { IndexCommits } from "./commits.js";
export { type CopyIndexOptions, type CopyIndexResult, copyIndex } from "./copy.js";
export {
  type Activity,
  type ActivityRow,
  type ContractType,
  type Kind,
  type Price,
  recordOf,
  type SaleTerms,
  stampTimes,
  timelessBlocks,
} from "./record.js";
export { closeIndexSources, indexSource, indexStatus } from "./source.js";
export {
  type Checkpoint,
  type IndexStatus,
  IndexStore,
  isMissingIndex,
  type PageQuery,
  type Position,
  type PriceAnswer,
} from "./store.js";
