/**
 * The transaction retrievers' ports and records as TypeBox schemas: one source for the TypeScript types, runtime
 * validation of inputs and the JSON Schema that `chainmail nodes`, `GET /nodes` and `/openapi.json` print.
 *
 * Record schemas describe the documented fields and admit what the real upstream sends beyond them (extra fields,
 * token ids as strings, quantities beyond 2^53): records are passed through unchanged, never trimmed.
 */
import { type Static, Type } from "@sinclair/typebox";
import { Address, Chain, ExactInteger, HEADER_VALUE_PATTERN, Uint64 } from "./common.js";

const open = { additionalProperties: true } as const;

const TokenIdNumber = Type.Union([ExactInteger(), Type.String({ pattern: "^[0-9]+$" })], {
  description:
    "An integer or a decimal string: NFTPort sends a decimal string (uint256, up to 78 digits), passed through as sent",
});
const Quantity = ExactInteger({
  description: "1 for ERC-721; ERC-1155 rows carry larger quantities, beyond 2^53 (kept exact)",
});
const BlockNumber = Type.Integer({ minimum: 0 });
const TransactionDate = Type.String({ description: "UTC, `YYYY-MM-DDTHH:MM:SS` in real data (no zone suffix)" });
const Marketplace = Type.String({
  description:
    "Marketplace name, as the source sends it. NFTPort: opensea, rarible, cryptopunks, looksrare, x2y2; the own index adds blur, sudoswap, seaport; OpenSea: opensea (absent on sales it saw filled elsewhere)",
});

export const NftObject = Type.Object(
  {
    contract_type: Type.Optional(
      Type.String({
        description: "ERC721 | ERC1155 (NFTPort also sends ERC721_lazy, ERC1155_lazy); absent on CryptoPunks sales",
      }),
    ),
    contract_address: Type.String(),
    token_id: Type.String({ description: "Decimal string" }),
    metadata_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    creators: Type.Optional(
      Type.Array(Type.Object({ account_address: Type.String(), creator_share: Type.Number() }, open)),
    ),
    royalties: Type.Optional(
      Type.Array(Type.Object({ account_address: Type.String(), royalty_share: Type.Number() }, open)),
    ),
    signatures: Type.Optional(Type.Array(Type.String())),
    total: Type.Optional(ExactInteger()),
  },
  { ...open, $id: "NftObject", title: "NFT object" },
);
export type NftObject = Static<typeof NftObject>;

/**
 * The exact decimal text of a price computed from an integer amount (core/exact-decimals.ts). JSON output writes the
 * price itself with these digits and leaves this field out; it is an ordinary field where a reader could not keep
 * the digits of a number: the service's `?bigint=string` and the workflow packages. In the library it is on the
 * record, not enumerable.
 */
const exactText = (key: string) =>
  Type.String({
    pattern: "^-?[0-9]+(\\.[0-9]+)?$",
    description: `\`${key}\` as its exact decimal, every digit (OpenSea's and the own index's prices, computed from integer amounts). In JSON output only with ?bigint=string and in the workflow packages; plain JSON writes \`${key}\` itself with these digits`,
  });

export const PriceObject = Type.Object(
  {
    asset_type: Type.String({ description: "ETH | ERC20" }),
    contract_address: Type.Optional(Type.String({ description: "The ERC-20 token, for asset_type ERC20" })),
    price: Type.Optional(
      Type.Number({
        description:
          "In whole units of the asset (not wei). Absent on real cancel_list rows, and on own-index sales whose price the chain does not state",
      }),
    ),
    price_usd: Type.Union([Type.Number(), Type.Null()], {
      description:
        "USD value at the time of the sale. Absent on real cancel_list rows, and on OpenSea's records unless a JSON-RPC node gives it (sales in ETH)",
    }),
    price_exact: Type.Optional(exactText("price")),
    price_usd_exact: Type.Optional(exactText("price_usd")),
  },
  { ...open, $id: "PriceObject", title: "Price object" },
);
export type PriceObject = Static<typeof PriceObject>;

const onChainFields = {
  transaction_hash: Type.String(),
  block_hash: Type.String(),
  block_number: BlockNumber,
  transaction_date: TransactionDate,
};

export const TransferRecord = Type.Object(
  {
    type: Type.Union([Type.Literal("transfer"), Type.Literal("mint"), Type.Literal("burn")]),
    owner_address: Type.Optional(Type.String()),
    transfer_from: Type.Optional(Type.String()),
    transfer_to: Type.Optional(Type.String()),
    contract_address: Type.String(),
    token_id: TokenIdNumber,
    quantity: Quantity,
    ...onChainFields,
  },
  { ...open, $id: "TransferRecord", title: "Shape A: transfer, mint or burn" },
);

export const SaleRecord = Type.Object(
  {
    type: Type.Literal("sale"),
    buyer_address: Type.Optional(Type.String()),
    seller_address: Type.String(),
    nft: NftObject,
    quantity: Quantity,
    price_details: PriceObject,
    ...onChainFields,
    marketplace: Marketplace,
  },
  { ...open, $id: "SaleRecord", title: "Shape B: sale" },
);

const orderBookFields = {
  nft: NftObject,
  quantity: Type.Optional(Quantity),
  price_details: PriceObject,
  transaction_hash: Type.Optional(Type.String()),
  block_hash: Type.Optional(Type.String()),
  block_number: Type.Optional(BlockNumber),
  transaction_date: TransactionDate,
  marketplace: Type.Optional(Marketplace),
};

export const BidRecord = Type.Object(
  {
    type: Type.Union([Type.Literal("bid"), Type.Literal("cancel_bid")]),
    bidder_address: Type.String(),
    ...orderBookFields,
  },
  { ...open, $id: "BidRecord", title: "Shape C: bid or cancelled bid" },
);

export const ListingRecord = Type.Object(
  {
    type: Type.Union([Type.Literal("list"), Type.Literal("cancel_list")]),
    lister_address: Type.String(),
    ...orderBookFields,
  },
  { ...open, $id: "ListingRecord", title: "Shape D: listing or cancelled listing" },
);

export const TransactionRecord = Type.Union([TransferRecord, SaleRecord, BidRecord, ListingRecord], {
  title: "Transaction record",
  description: "One of four shapes, told apart by `type`",
});
export type TransactionRecord = Static<typeof TransactionRecord>;

/** Port `data` of the three retrievers. */
export const RetrieverResult = Type.Object(
  {
    response: Type.Literal("OK"),
    transactions: Type.Array(TransactionRecord),
    continuation: Type.String({
      description: "Pass it back to get the next page. Empty string: there is no next page",
    }),
  },
  { $id: "RetrieverResult", title: "Retriever result" },
);
export type RetrieverResult = Static<typeof RetrieverResult>;

// ---- inputs ----

const typeFilter = <T extends string>(values: readonly T[]) =>
  Type.Array(Type.Union(values.map((v) => Type.Literal(v))), {
    default: ["all"],
    // Each kind once is all a filter can say; the bound keeps the URL short.
    uniqueItems: true,
    maxItems: values.length,
    description: `Transaction kinds to return: ${values.join(", ")}. Default ["all"]`,
  });

/** Largest page any source serves (the own index; NFTPort itself accepts 1 to 50 and says so). */
const MAX_PAGE_SIZE_ANY_SOURCE = 1000;
/** Longer than any continuation a source issues (NFTPort's and the index's are under 100 characters). */
const MAX_CONTINUATION_LENGTH = 1024;

const BY_CONTRACT_TYPES = ["transfer", "mint", "burn", "bid", "list", "sale", "all"] as const;
const ON_CHAIN_TYPES = ["transfer", "mint", "burn", "sale", "all"] as const;
const BY_TOKEN_TYPES = ["transfer", "mint", "burn", "sale", "all"] as const;

const paging = {
  continuation: Type.Optional(
    Type.String({
      maxLength: MAX_CONTINUATION_LENGTH,
      description: "The `continuation` of the previous page; omit for the first page",
      "x-rule": `a string of at most ${MAX_CONTINUATION_LENGTH} characters`,
    }),
  ),
  page_size: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_PAGE_SIZE_ANY_SOURCE,
      description: `Records per page, 1 to ${MAX_PAGE_SIZE_ANY_SOURCE} (NFTPort accepts 1 to 50, default 50; OpenSea 1 to 200; the own index up to 1000, default 50)`,
    }),
  ),
};
const strict = { additionalProperties: false } as const;

export const ByContractQuery = Type.Object(
  {
    contract_address: Address("The NFT contract"),
    ...paging,
    type: Type.Optional(typeFilter(BY_CONTRACT_TYPES)),
  },
  { ...strict, title: "Query: transactions by contract" },
);
export type ByContractQuery = Static<typeof ByContractQuery>;

export const OnChainQuery = Type.Object(
  {
    ...paging,
    type: Type.Optional(typeFilter(ON_CHAIN_TYPES)),
    from_block: Type.Optional(Uint64("First block (inclusive)")),
    to_block: Type.Optional(Uint64("Last block (inclusive), >= from_block")),
  },
  { ...strict, title: "Query: transactions on the whole chain" },
);
export type OnChainQuery = Static<typeof OnChainQuery>;

export const ByTokenQuery = Type.Object(
  {
    contract_address: Address("The NFT contract"),
    token_id: Type.String({
      pattern: "^[0-9]{1,78}$",
      description: "Decimal token id (uint256), as a string",
      "x-rule": "a decimal integer string (uint256)",
    }),
    ...paging,
    type: Type.Optional(typeFilter(BY_TOKEN_TYPES)),
  },
  { ...strict, title: "Query: transactions of one token" },
);
export type ByTokenQuery = Static<typeof ByTokenQuery>;

export const NftParams = Type.Object(
  {
    api_key: Type.String({
      minLength: 1,
      maxLength: 1024,
      // It is sent as the Authorization header: a value HTTP cannot carry is refused before anything is sent.
      pattern: HEADER_VALUE_PATTERN,
      description:
        "API key of the configured source: NFTPort's, or OpenSea's (sent as X-API-KEY) with NFT_SOURCE=opensea or index+opensea. May be omitted when the operator configured NFTPORT_API_KEY / OPENSEA_API_KEY, or with NFT_SOURCE=index",
      "x-secret": true,
      "x-rule":
        "a string an HTTP header can carry (at most 1024 visible Latin-1 characters, no line breaks or control characters, no space at either end)",
      // What a caller without a key can do instead (the message of a missing key says it).
      "x-missing":
        "give the source's API key here, or set NFTPORT_API_KEY (OPENSEA_API_KEY with NFT_SOURCE=opensea), or read from another source with NFT_SOURCE=index|opensea (`chainmail --help` lists them)",
    }),
    chain: Type.Optional(Chain),
  },
  // Holds a credential: no value given here is ever echoed in an error, wherever in it the mistake is.
  { ...strict, title: "Params: the source's API key and chain", "x-secret": true },
);
export type NftParams = Static<typeof NftParams>;
