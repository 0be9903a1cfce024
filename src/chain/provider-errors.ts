/**
 * What a JSON-RPC provider's error means, in its own words: a log range too large (and the size that works, when
 * it says), throttling, a refused batch, or a block it does not have yet. One place for every provider's wording.
 *
 * The wordings are the providers' own, as their users quote them in public issues:
 * - Alchemy, -32602: "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and
 *   no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based
 *   on your parameters, this block range should work: [0x…, 0x…]"; on the free tier "Under the Free tier plan, you
 *   can make eth_getLogs requests with up to a 10 block range. Based on your parameters, this block range should
 *   work: [0x…, 0x…]". Throttling inside a 200 answer, per batch item: {"code": 429, "message": "Your app has
 *   exceeded its compute units per second capacity…"}.
 * - Infura, -32005: "query returned more than 10000 results" (its `data` holds a `from`/`to` that works); -32602
 *   "range 1000000 exceeds limit of 10000" (INFURA/infura#237); throttling -32005 "project ID request rate
 *   exceeded" / "daily request count exceeded, request rate limited".
 * - QuickNode, -32614 with HTTP 413: "eth_getLogs is limited to a 10,000 range" (OffchainLabs/arbitrum-sdk#609,
 *   eternalsafe/wallet#57): the number is blocks though the message does not say so.
 * - geth-based nodes (BSC, publicnode), -32000/-32701: "exceed maximum block range: 50000"; erigon "query block
 *   range exceeds server limit, narrow your filter: 1000" and "query returns too many logs, narrow your filter:
 *   20000"; reth "query exceeds max results 20000, retry with the range 25766988-25775072" (paradigmxyz/reth#23810:
 *   the range it names can be the one refused, so a suggestion is never taken unless it is smaller).
 * - Others (Ponder's getLogsRetryHelper lists them): "Max range: 3000" (Cloudflare), "block range is too wide"
 *   (Ankr), "range 9009594 is bigger than range limit 2000" (Tenderly), "block range too large" (Base),
 *   "please limit the query to at most 1,000 blocks" (Coinbase), "logs matched by query exceeds limit of 10000"
 *   (Arbitrum), "response size should not greater than 10000000 bytes" (1RPC).
 */

/** What a range refusal says about a size that works. */
export interface RangeRefusal {
  /** Blocks a range may span (the provider's cap, or the range it suggested from this range's start). */
  blocks?: number | undefined;
  /**
   * `blocks` is a range the provider suggested for this request (Alchemy's "this block range should work: [0x…,
   * 0x…]", Infura's `data`): what its logs allow here, not a cap on every range.
   */
  suggested?: true;
  /**
   * A cap on every range the words state (QuickNode's "limited to a 10,000 range", Alchemy's free tier "up to a
   * 10 block range"); none where they promise any range under a logs cap (Alchemy's "any block range with a cap of
   * 10K logs": its "2K block range" is then the size served whatever the answer, not a cap).
   */
  cap?: number | undefined;
  /**
   * The words refuse an answer for its count of logs ("Log response size exceeded", "more than 10000 results",
   * "too many logs"): a provider that counts and refuses, rather than cutting an answer off silently.
   */
  overLogCap?: true;
}

const LOG_COUNT_WORDS = /\blogs?\b|results/i;

const RANGE_WORDS =
  /range|too many|too large|too wide|limit|exceed|more than|results|response size|max|narrow your filter|at most/i;

/** JSON-RPC codes that mean "this request is too large" whatever the words. */
const SIZE_CODES = new Set([-32005, -32614]);

/**
 * Whether a JSON-RPC error to `eth_getLogs` refuses the range's size, and what size works if it says. Undefined
 * when it is something else (throttling included: -32005 serves both at Infura).
 */
export function rangeRefusal(
  error: { code: number; message: string; data?: unknown; status?: number },
  from: number,
  size: number,
): RangeRefusal | undefined {
  const message = bounded(error.message);
  // "block range extends beyond current head block" is a backend behind the head, not a range too large.
  if (isThrottling(error.code, message) || isBeyondHead(message)) return undefined;
  const sized = SIZE_CODES.has(error.code) || error.status === 413 || RANGE_WORDS.test(message);
  if (!sized) return undefined;
  const working = suggestedRange(message, from) ?? dataRange(error.data, from);
  const stated = ANY_RANGE_UNDER_LOG_CAP.test(message) ? undefined : statedCap(message);
  const cap = stated !== undefined && stated < size ? stated : undefined;
  const counted = LOG_COUNT_WORDS.test(message) ? ({ overLogCap: true } as const) : {};
  // A suggestion no smaller than what was refused (reth can name the refused range itself) says nothing.
  if (working !== undefined && working < size) return { blocks: working, suggested: true, cap, ...counted };
  return { blocks: working === undefined ? cap : undefined, cap, ...counted };
}

/** Alchemy's wording of its rule: any range is served while its answer holds at most that many logs. */
const ANY_RANGE_UNDER_LOG_CAP = /any block range with a cap of/i;

/** The size in blocks a refusal's words name, if any: a working range from `from`, or a stated cap. */
export function suggestedBlocks(text: string, from: number): number | undefined {
  const message = bounded(text);
  return suggestedRange(message, from) ?? statedCap(message);
}

/** The working range from `from` a refusal names: "[0x10, 0x1f]" (Alchemy, Infura, zkSync), "range 16-100015" (reth). */
function suggestedRange(message: string, from: number): number | undefined {
  const pair =
    /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(message) ?? /range\s+(\d+)\s*-\s*(\d+)/i.exec(message);
  if (!pair) return undefined;
  const end = Number(pair[2]);
  return Number.isSafeInteger(end) && end >= from && Number(pair[1]) <= from ? end - from + 1 : undefined;
}

/** The cap in blocks a refusal's words state, if any. */
function statedCap(message: string): number | undefined {
  const patterns = [
    // "limited to a 10,000 range" (QuickNode), "up to a 2K block range" (Alchemy), "limited to 1000 blocks".
    /(?:limited to|up to) (?:an? )?([\d,.]+k?) (?:blocks?|range|block range)/i,
    // "exceed maximum block range: 50000", "maximum block range: 5000", "max range: 3000", "max is 10k blocks".
    /max(?:imum)? (?:block )?range:? ([\d,.]+k?)/i,
    // "range 1000000 exceeds limit of 10000", "bigger than range limit 2000", "block range limit exceeded 5000".
    /(?:exceeds|range) limit (?:of )?([\d,.]+k?)/i,
    // "please limit the query to at most 1,000 blocks", "narrow your filter: 1000" (erigon's block range cap).
    /at most ([\d,.]+k?) blocks?/i,
    /block range exceeds server limit, narrow your filter: ([\d,.]+)/i,
    // "block range is too wide (maximum 1024)", "maximum [from, to] blocks distance: 3000".
    /too wide \(maximum (\d+)\)/i,
    /blocks distance: (\d+)/i,
    // "… 800 blocks" anywhere.
    /([\d,.]+k?) blocks?\b/i,
  ];
  for (const pattern of patterns) {
    const match = pattern.exec(message);
    if (!match) continue;
    const value = parseCount(match[1]!);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** A provider's message is read only as far as any real one goes: the patterns then stay linear in its length. */
function bounded(message: unknown): string {
  return typeof message === "string" ? message.slice(0, 1_000) : "";
}

/** "10,000" → 10000, "2K" → 2000; undefined unless a positive safe integer. */
function parseCount(text: string): number | undefined {
  const thousands = /k$/i.test(text);
  const value = Number(text.replace(/[,.k]/gi, "")) * (thousands ? 1000 : 1);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Infura's `data: {from, to}`: the range that works from this one's start. */
function dataRange(data: unknown, from: number): number | undefined {
  if (!data || typeof data !== "object" || !Object.hasOwn(data, "to")) return undefined;
  const to = Number((data as { to: unknown }).to);
  return Number.isSafeInteger(to) && to >= from ? to - from + 1 : undefined;
}

const THROTTLE_WORDS =
  /rate limit|rate exceeded|request rate|too many requests|compute units|capacity|throttl|slow down|daily request count|credits/i;

/** -32005 "limit exceeded" (Infura's and geth-style rate limiters' bare words): throttling, unlike a size cap. */
const BARE_LIMIT = /^\s*(request )?limit exceeded\.?\s*$/i;

/** Whether a JSON-RPC error object is throttling (Alchemy's per-item 429, Infura's -32005 rate limit…). */
export function isThrottling(code: number, message: string): boolean {
  const said = bounded(message);
  return code === 429 || code === -32029 || THROTTLE_WORDS.test(said) || (code === -32005 && BARE_LIMIT.test(said));
}

/**
 * Whether an answer refuses a batch as such: HTTP 413 or 400 to a JSON array, a single error object answering an
 * array ("batch size exceeded", -32600 invalid request), or words about batches.
 */
export function isBatchRefusal(status: number, error: { code: number; message: string } | undefined): boolean {
  if (status === 413 || status === 400) return true;
  if (!error) return false;
  return error.code === -32600 || /batch/i.test(bounded(error.message));
}

/** Whether an error says the node does not have a block (yet): a lagging backend asked by block hash. */
export function isUnknownBlock(message: string): boolean {
  return /unknown block|block not found|header not found|cannot find block|missing block/i.test(bounded(message));
}

/**
 * Whether an error reports the call's own execution failing (geth's and erigon's "execution reverted", anvil's and
 * reth's "EVM error …", an out-of-gas or invalid opcode): the same call fails the same way again, so it is not
 * retried, even under the generic -32603 code some nodes give it.
 */
export function isExecutionFailure(message: string): boolean {
  return /revert|EVM error|out of gas|invalid opcode|invalid jump|stack underflow/i.test(bounded(message));
}

/**
 * Whether an error says the node does not offer the method (JSON-RPC -32601, or words to that effect: some
 * providers answer -32600/-32000 with "method not supported" / "not available" / "does not exist").
 */
export function isMethodMissing(code: number, message: string): boolean {
  return (
    code === -32601 ||
    /method .*(not (found|supported|available|allowed)|does not exist|unsupported)/i.test(bounded(message))
  );
}

/**
 * Whether an error refuses a call's argument as such (JSON-RPC -32602, geth's "invalid argument 0: hex number > 64
 * bits"): a node whose `eth_getBlockReceipts` takes a block number only answers so to a block hash.
 */
export function isInvalidArgument(code: number, message: string): boolean {
  return code === -32602 || /invalid (argument|params)/i.test(bounded(message));
}

/**
 * Whether an `eth_getLogs` error says the range ends past the node's head (geth and reth, -32602: "block range
 * extends beyond current head block"): a node behind the head another one announced, not a range too large.
 */
export function isBeyondHead(message: string): boolean {
  return /beyond (the )?(current )?head/i.test(bounded(message));
}
