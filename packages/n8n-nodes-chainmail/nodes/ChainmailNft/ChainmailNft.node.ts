import {
  type IExecuteFunctions,
  type INodeExecutionData,
  type INodeProperties,
  type INodeType,
  type INodeTypeDescription,
  NodeConnectionTypes,
  NodeOperationError,
} from "n8n-workflow";
import {
  type AnyNode,
  configFor,
  errorItem,
  item,
  nftTransactionsByContract,
  nftTransactionsByToken,
  nftTransactionsOnChain,
  nodeError,
  PageError,
  pagesWith,
  sourceCredentials,
  sourceParameter,
  typeFilterValues,
} from "../../shared/chainmail";

/** The three retrievers, by operation. */
const OPERATIONS: Record<string, { node: AnyNode; name: string; action: string; description: string }> = {
  getByContract: {
    node: nftTransactionsByContract,
    name: "Get by Contract",
    action: "Get transactions of a contract",
    description: "Transfers, mints, burns, sales, bids and listings of one NFT contract, newest first",
  },
  getOnChain: {
    node: nftTransactionsOnChain,
    name: "Get on Chain",
    action: "Get transactions of the whole chain",
    description: "Transfers, mints, burns and sales of every NFT, oldest first, optionally within a block range",
  },
  getByToken: {
    node: nftTransactionsByToken,
    name: "Get by Token",
    action: "Get transactions of a token",
    description: "Transfers, mints, burns and sales of one NFT, newest first",
  },
};

const typeFilters: INodeProperties[] = Object.entries(OPERATIONS).map(([operation, { node }]) => ({
  displayName: "Transaction Types",
  name: "types",
  type: "multiOptions",
  options: typeFilterValues(node).map((value) => ({ name: value, value })),
  default: ["all"],
  description: "Kinds of transaction to return",
  displayOptions: { show: { operation: [operation] } },
}));

export class ChainmailNft implements INodeType {
  description: INodeTypeDescription = {
    displayName: "Chainmail NFT",
    name: "chainmailNft",
    icon: { light: "file:chainmail.svg", dark: "file:chainmail.dark.svg" },
    group: ["input"],
    version: 1,
    subtitle: '={{$parameter["operation"]}}',
    description: "Ethereum NFT transactions by contract, by token or of the whole chain, every integer exact",
    defaults: { name: "Chainmail NFT" },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    usableAsTool: true,
    credentials: sourceCredentials(),
    properties: [
      sourceParameter("Where the transactions are read from"),
      {
        displayName: "Resource",
        name: "resource",
        type: "options",
        noDataExpression: true,
        options: [{ name: "NFT Transaction", value: "nftTransaction" }],
        default: "nftTransaction",
      },
      {
        displayName: "Operation",
        name: "operation",
        type: "options",
        noDataExpression: true,
        displayOptions: { show: { resource: ["nftTransaction"] } },
        options: Object.entries(OPERATIONS).map(([value, op]) => ({
          name: op.name,
          value,
          action: op.action,
          description: op.description,
        })),
        default: "getByContract",
      },
      {
        displayName: "Contract Address",
        name: "contractAddress",
        type: "string",
        required: true,
        default: "",
        placeholder: "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d",
        description: "The NFT contract (0x and 40 hex digits)",
        displayOptions: { show: { operation: ["getByContract", "getByToken"] } },
      },
      {
        displayName: "Token ID",
        name: "nftId",
        type: "string",
        required: true,
        default: "",
        placeholder: "1234",
        description: "The token ID in decimal, any size (uint256)",
        displayOptions: { show: { operation: ["getByToken"] } },
      },
      ...typeFilters,
      {
        displayName: "From Block",
        name: "fromBlock",
        type: "number",
        default: 0,
        description: "First block (inclusive); 0 for no lower bound",
        displayOptions: { show: { operation: ["getOnChain"] } },
      },
      {
        displayName: "To Block",
        name: "toBlock",
        type: "number",
        default: 0,
        description: "Last block (inclusive); 0 for no upper bound",
        displayOptions: { show: { operation: ["getOnChain"] } },
      },
      {
        displayName: "Return All",
        name: "returnAll",
        type: "boolean",
        default: false,
        description: "Whether to return all results or only up to a given limit",
      },
      {
        displayName: "Limit",
        name: "limit",
        type: "number",
        typeOptions: { minValue: 1 },
        default: 50,
        description: "Max number of results to return",
        displayOptions: { show: { returnAll: [false] } },
      },
      {
        displayName: "Options",
        name: "options",
        type: "collection",
        placeholder: "Add option",
        default: {},
        options: [
          {
            displayName: "Continuation",
            name: "continuation",
            type: "string",
            default: "",
            description: "Resume after the page that gave this continuation (from a raw output)",
          },
          {
            displayName: "Page Size",
            name: "pageSize",
            type: "number",
            typeOptions: { minValue: 1, maxValue: 1000 },
            default: 50,
            description: "Records asked for per call (NFTPort serves at most 50, OpenSea 200)",
          },
          {
            displayName: "Raw Output",
            name: "rawOutput",
            type: "boolean",
            default: false,
            description:
              "Whether to output one item per page holding the node's output (data with its continuation, and the upstream's raw response) instead of one item per record",
          },
        ],
      },
    ],
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    const items = this.getInputData();
    const out: INodeExecutionData[] = [];
    const source = this.getNodeParameter("source", 0) as string;
    const ctx = { config: await configFor(this, "source", source) };
    for (let i = 0; i < items.length; i++) {
      const operation = this.getNodeParameter("operation", i) as string;
      const { node } = OPERATIONS[operation]!;
      const options = this.getNodeParameter("options", i, {}) as {
        continuation?: string;
        pageSize?: number;
        rawOutput?: boolean;
      };
      const query: Record<string, unknown> = { type: this.getNodeParameter("types", i, ["all"]) };
      if (operation !== "getOnChain") query.contract_address = this.getNodeParameter("contractAddress", i);
      if (operation === "getByToken") query.token_id = this.getNodeParameter("nftId", i);
      if (operation === "getOnChain") {
        const from = this.getNodeParameter("fromBlock", i, 0) as number;
        const to = this.getNodeParameter("toBlock", i, 0) as number;
        if (from) query.from_block = from;
        if (to) query.to_block = to;
      }
      if (options.continuation) query.continuation = options.continuation;
      if (options.pageSize) query.page_size = options.pageSize;
      const returnAll = this.getNodeParameter("returnAll", i) as boolean;
      const limit = returnAll ? undefined : (this.getNodeParameter("limit", i) as number);
      try {
        for await (const page of pagesWith(node, { query }, { limit }, ctx)) {
          if (options.rawOutput) {
            const data = { response: "OK", transactions: page.transactions, continuation: page.continuation };
            out.push(item({ data, response: page.response }, i));
          } else for (const record of page.transactions) out.push(item(record, i));
        }
      } catch (error) {
        if (!(error instanceof PageError))
          throw new NodeOperationError(this.getNode(), error as Error, { itemIndex: i });
        if (!this.continueOnFail()) throw nodeError(this, error.payload, i);
        out.push(errorItem(error.payload, i));
      }
    }
    return [out];
  }
}
