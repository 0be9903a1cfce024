/**
 * The library's typed entry points: `runNode`, `pages` and `records` take a node or its id, and type the input
 * and output from the node's port schemas, so a misspelt field does not compile. They run the generic ones of
 * `core` (what the command line and the service call with input they have not typed).
 */
import { ChainmailError } from "../core/errors.js";
import { type AnyNode, type InputOfNode, type OutputOfNode, type RunContext, runNode as runAny } from "../core/node.js";
import { type Page, type PaginateOptions, pages as pagesAny } from "../core/paginate.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { getNode, type NodeId, type NodesById, type RetrieverId } from "./index.js";

/** A node given by id, or the node itself. */
type NodeOf<N> = N extends NodeId ? NodesById[N] : N;

/** The input object of a node, by id or node: `InputOf<"nft-transactions-by-token">`. */
export type InputOf<N extends NodeId | AnyNode> = InputOfNode<NodeOf<N>>;

/** The output object of a node, by id or node: `OutputOf<"email-send">`. */
export type OutputOf<N extends NodeId | AnyNode> = OutputOfNode<NodeOf<N>>;

/**
 * Runs a node on one input object (keyed by input port), given as the node or its id. Always resolves; failures
 * are on `error` (an unknown id too). Without a context, the process environment's configuration is used.
 */
export function runNode<N extends NodeId | AnyNode>(
  node: N,
  input: InputOf<N>,
  ctx: Partial<RunContext> = {},
): Promise<OutputOf<N>> {
  const definition = typeof node === "string" ? getNode(node) : (node as AnyNode);
  if (!definition) return Promise.resolve({ error: unknownNode(node) } as OutputOf<N>);
  return runAny(definition, input, ctx) as Promise<OutputOf<N>>;
}

/** A retriever, given as the node or its id. */
type Retriever = RetrieverId | NodesById[RetrieverId];

/**
 * Yields each page of a retriever's results (see `core/paginate.ts`). `ctx` is what `runNode` takes: e.g.
 * `{ config: loadConfig({ NFT_SOURCE: "index", INDEX_DB: … }) }` to page through the own index.
 */
export function pages<R = TransactionRecord, N extends Retriever = Retriever>(
  node: N,
  input: InputOf<N>,
  options: PaginateOptions = {},
  ctx: Partial<RunContext> = {},
): AsyncGenerator<Page<R>> {
  return pagesAny<R>(retriever(node), input as Parameters<typeof pagesAny>[1], options, ctx);
}

/** Yields every record across a retriever's pages, up to `options.limit`; `ctx` as for `pages`. */
export async function* records<R = TransactionRecord, N extends Retriever = Retriever>(
  node: N,
  input: InputOf<N>,
  options: PaginateOptions = {},
  ctx: Partial<RunContext> = {},
): AsyncGenerator<R> {
  for await (const page of pages<R, N>(node, input, options, ctx)) yield* page.transactions;
}

function retriever(node: Retriever): AnyNode {
  const definition = typeof node === "string" ? getNode(node) : (node as AnyNode);
  if (!definition) throw new ChainmailError("UNKNOWN_NODE", `Unknown node "${String(node)}".`);
  return definition;
}

function unknownNode(id: unknown) {
  return new ChainmailError("UNKNOWN_NODE", `Unknown node "${String(id).slice(0, 100)}".`, {
    hint: "`chainmail nodes` lists the nodes; the library's `nodes` maps each id to its node.",
  }).toPayload();
}
