/**
 * The ingestion folder's face: `chainmail index` (logs read from a JSON-RPC node, decoded, priced and committed to
 * the own index's store in block order) and the check of a `--verify-rpc` URL. Nothing outside reaches its other
 * files.
 */

export { type IndexChainOptions, type IndexChainResult, type IndexProgress, indexChain } from "./indexer.js";
export { verifyRpcProblem } from "./verify.js";
