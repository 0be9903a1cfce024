import {
  type INodeExecutionData,
  type INodeType,
  type INodeTypeDescription,
  type IPollFunctions,
  NodeConnectionTypes,
} from "n8n-workflow";
import {
  type ActivityCursor,
  type ActivityTarget,
  activityDetails,
  configFor,
  detailsCache,
  type EnrichmentCache,
  item,
  nftTransactionsByContract,
  nftTransactionsByToken,
  nftTransactionsOnChain,
  nodeError,
  PageError,
  pagesWith,
  parseRecordFilter,
  pollActivity,
  type RecordFilter,
  type RunContext,
  sourceCredentials,
  sourceParameter,
  toErrorPayload,
  typeFilterValues,
  WALLET_SIDES,
} from "../../shared/chainmail";

/** Token details kept between polls, shared by the triggers of this n8n process (keyed by token and address). */
let cache: EnrichmentCache | undefined;

/** Records a manual test run shows: the newest few, without moving the cursor. */
const SAMPLE = 5;

export class ChainmailTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: "Chainmail Trigger",
    name: "chainmailTrigger",
    icon: { light: "file:chainmail.svg", dark: "file:chainmail.dark.svg" },
    group: ["trigger"],
    version: 1,
    subtitle: '={{$parameter["watch"]}}',
    description: "Starts the workflow on new NFT activity of a contract, a token or the whole chain, each record once",
    defaults: { name: "Chainmail Trigger" },
    polling: true,
    inputs: [],
    outputs: [NodeConnectionTypes.Main],
    credentials: sourceCredentials(),
    properties: [
      sourceParameter("Where the activity is read from"),
      {
        displayName: "Watch",
        name: "watch",
        type: "options",
        noDataExpression: true,
        options: [
          { name: "Contract", value: "contract", description: "Every new record of one NFT contract" },
          { name: "Token", value: "token", description: "Every new record of one NFT" },
          { name: "Whole Chain", value: "chain", description: "Every new record on Ethereum from a start block on" },
        ],
        default: "contract",
      },
      {
        displayName: "Contract Address",
        name: "contractAddress",
        type: "string",
        required: true,
        default: "",
        placeholder: "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
        description: "The NFT contract (0x and 40 hex digits)",
        displayOptions: { show: { watch: ["contract", "token"] } },
      },
      {
        displayName: "Token ID",
        name: "nftId",
        type: "string",
        required: true,
        default: "",
        description: "The token ID in decimal, any size (uint256)",
        displayOptions: { show: { watch: ["token"] } },
      },
      {
        displayName: "Start Block",
        name: "startBlock",
        type: "number",
        required: true,
        default: 0,
        description: "Activity from this block on is new (the first poll emits it)",
        displayOptions: { show: { watch: ["chain"] } },
      },
      {
        displayName: "Transaction Types",
        name: "types",
        type: "multiOptions",
        options: typeFilterValues(nftTransactionsByContract).map((value) => ({ name: value, value })),
        default: ["all"],
        description: "Kinds of transaction to trigger on (bid and list: contracts only)",
      },
      {
        displayName: "Filters",
        name: "filters",
        type: "collection",
        placeholder: "Add Filter",
        default: {},
        options: [
          {
            displayName: "Contracts",
            name: "contracts",
            type: "string",
            default: "",
            placeholder: "0xbc4c…, 0x60e4…",
            description: "Whole chain: only records of these NFT contracts (comma-separated), read in one read",
          },
          {
            displayName: "Marketplaces",
            name: "marketplaces",
            type: "string",
            default: "",
            placeholder: "opensea, blur",
            description: "Only records of these marketplaces, as the source names them (comma-separated)",
          },
          {
            displayName: "Min Quantity",
            name: "minQuantity",
            type: "number",
            typeOptions: { minValue: 1 },
            default: 1,
            description: "Only records moving at least this many tokens",
          },
          {
            displayName: "Side",
            name: "side",
            type: "options",
            options: WALLET_SIDES.map((side) => ({ name: side[0]!.toUpperCase() + side.slice(1), value: side })).sort(
              (a, b) => a.name.localeCompare(b.name),
            ),
            default: "any",
            description: "Which party the wallets must be: buyer or seller (sales), from or to, lister, bidder",
          },
          {
            displayName: "Wallets",
            name: "wallets",
            type: "string",
            default: "",
            placeholder: "0xd8dA…, 0xab58…",
            description: "Only records where one of these addresses (comma-separated) is the party on Side",
          },
        ],
      },
    ],
  };

  async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
    const source = this.getNodeParameter("source") as string;
    const watch = this.getNodeParameter("watch") as string;
    const type = this.getNodeParameter("types", ["all"]) as string[];
    const ctx = { config: await configFor(this, "source", source) };
    let target: ActivityTarget;
    if (watch === "chain") target = { kind: "chain", type, start_block: this.getNodeParameter("startBlock") as number };
    else {
      const contract_address = this.getNodeParameter("contractAddress") as string;
      target =
        watch === "token"
          ? { kind: "token", contract_address, token_id: this.getNodeParameter("nftId") as string, type }
          : { kind: "contract", contract_address, type };
    }
    try {
      const filter = filterOf(watch, this.getNodeParameter("filters", {}) as Record<string, unknown>);
      if (this.getMode() === "manual") return await sample(target, ctx);
      const state = this.getWorkflowStaticData("node") as { cursor?: ActivityCursor };
      const { records, cursor } = await pollActivity(target, state.cursor, ctx, { filter });
      // Token details beside each record's fields (`token_details`), through n8n's request helper and its guards.
      cache ??= detailsCache(ctx.config);
      const details = (await activityDetails(ctx.config, cache)?.(records)) ?? [];
      // Kept only once the records are handed to n8n: a failed poll reads the same window again next time.
      state.cursor = cursor;
      if (!records.length) return null;
      return [
        records.map((record, i) => {
          const found = details[i];
          return item(found && Object.keys(found).length ? { ...record, token_details: found } : record);
        }),
      ];
    } catch (error) {
      const payload = error instanceof PageError ? error.payload : toErrorPayload(error);
      throw nodeError(this, payload);
    }
  }
}

/** A comma- or space-separated field as a list; empty: not given. */
function listOf(text: unknown): string[] | undefined {
  const items = String(text ?? "")
    .split(/[\s,]+/)
    .filter(Boolean);
  return items.length ? items : undefined;
}

/** The Filters collection as a checked filter: invalid_input naming every bad field. */
function filterOf(watch: string, given: Record<string, unknown>): RecordFilter {
  const contracts = watch === "chain" ? listOf(given.contracts) : undefined;
  const wallets = listOf(given.wallets);
  const marketplaces = listOf(given.marketplaces);
  const quantity = given.minQuantity;
  return parseRecordFilter({
    ...(contracts ? { contracts } : {}),
    ...(wallets ? { wallets, side: given.side ?? "any" } : {}),
    ...(marketplaces ? { marketplaces } : {}),
    ...(quantity !== undefined && quantity !== 1 ? { min_quantity: quantity } : {}),
  });
}

/** A manual run: the newest records of the target (the first ones from the start block, for the chain). */
async function sample(target: ActivityTarget, ctx: RunContext): Promise<INodeExecutionData[][] | null> {
  const base = target.kind === "chain" ? {} : { contract_address: target.contract_address };
  const [node, query] =
    target.kind === "chain"
      ? [nftTransactionsOnChain, { type: target.type, from_block: target.start_block }]
      : target.kind === "token"
        ? [nftTransactionsByToken, { ...base, token_id: target.token_id, type: target.type }]
        : [nftTransactionsByContract, { ...base, type: target.type }];
  const records: unknown[] = [];
  for await (const page of pagesWith(node, { query }, { limit: SAMPLE }, ctx)) records.push(...page.transactions);
  return records.length ? [records.map((record) => item(record))] : null;
}
