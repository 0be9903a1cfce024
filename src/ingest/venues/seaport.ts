/**
 * Seaport `OrderFulfilled(bytes32 orderHash, address indexed offerer, address indexed zone, address recipient,
 * SpentItem[] offer, ReceivedItem[] consideration)`: basic sales only, per the rule Reservoir and Messari use.
 *
 * Listing filled (offer = one NFT): price = sum of every consideration item in the payment currency (gross, fees
 * and royalties included); seller = offerer, buyer = recipient (or the recipient of a consideration item that is
 * the NFT itself, the matchOrders override). Bid filled (offer = one currency item, consideration[0] = the NFT):
 * price = the offered amount; buyer = offerer, seller = recipient. Bundles and swaps are not understood.
 *
 * Attribution: Seaport is a protocol, not a marketplace. A fill is named after the venue of its order, as the event
 * shows it (SEAPORT_VENUES, first match wins): the exchange contract (marketplaces running their own copy of
 * Seaport), then the order's zone, then a marketplace fee wallet among its consideration recipients. The site
 * that submitted the transaction (an aggregator, a domain tag in the calldata) does not count. A fill matching
 * no rule is `seaport`.
 */
import { fits, type RawLog, topic0, topicAddress, wordAddress, wordBig, wordNumber } from "../decode.js";
import { sale, type TxContext, type Venue } from "./venue.js";

export const ORDER_FULFILLED = "0x9d9af8e38d66c62e2c12f0225249fd9d721c54b83f48d9352c97c6cacdcb6f31";

/** Seaport 1.1, 1.4, 1.5 and 1.6 on Ethereum mainnet; other deployments are configured (`--seaport`). */
export const MAINNET_SEAPORTS = [
  "0x00000000006c3852cbef3e08e8df289169ede581",
  "0x00000000000001ad428e4906ae43d8f9852d0dd6",
  "0x00000000000000adc04c56bf30ac9d3c0aaf14dc",
  "0x0000000000000068f116a894984e2db1123eb395",
];

export interface SeaportRule {
  /** What identifies the venue: the emitting contract, the order's zone, or a consideration item's recipient. */
  by: "exchange" | "zone" | "fee recipient";
  address: string;
  marketplace: string;
  /** The public statement the rule rests on (docs/venues.md lists them). */
  source: string;
}

const DUNE = "Dune spellbook seaport_ethereum_tagging";
const RESERVOIR_FEES = "Reservoir indexer feeRecipients.json";
const RESERVOIR_SDK = "Reservoir SDK exchange addresses";
const MAGIC_EDEN = `${RESERVOIR_FEES}; Dune spellbook magiceden_ethereum (its platform fee address)`;
const OPENSEA_WALLET = `${RESERVOIR_FEES}; Messari's OpenSea subgraph`;

/**
 * Every Seaport attribution rule, in the order they are tried: marketplaces running their own copy of Seaport
 * (every fill there is theirs); zones (OpenSea's signed zones of Seaport 1.1 to 1.6, its protected-offers zone,
 * whose offer fills pay no OpenSea fee wallet, and two older ones; Blur's zone); marketplace fee wallets.
 */
export const SEAPORT_VENUES: readonly SeaportRule[] = (
  [
    ["exchange", "0x90a77dd8ae0525e08b1c2930eb2eb650e78c6725", "okx", RESERVOIR_SDK],
    ["exchange", "0x83746de31fc8de985ffe46c1c20ea6d7d8f4ed3a", "alienswap", RESERVOIR_SDK],
    ["zone", "0x004c00500000ad104d7dbd00e3ae0a5c00560c00", "opensea", DUNE],
    ["zone", "0x110b2b128a9ed1be5ef3232d8e4e41640df5c2cd", "opensea", DUNE],
    ["zone", "0x000056f7000000ece9003ca63978907a00ffd100", "opensea", DUNE],
    ["zone", "0x000000e7ec00e7b300774b00001314b8610022b8", "opensea", DUNE],
    ["zone", "0xf397619df7bfd4d1657ea9bdd9df7ff888731a11", "opensea", DUNE],
    ["zone", "0x9b814233894cd227f561b78cc65891aa55c62ad2", "opensea", DUNE],
    ["zone", "0x0000000000d80cfcb8dfcd8b2c4fd9c813482938", "blur", DUNE],
    ["fee recipient", "0x0000a26b00c1f0df003000390027140000faa719", "opensea", OPENSEA_WALLET],
    ["fee recipient", "0x8de9c5a032463c561423387a9648c5c7bcc5bc90", "opensea", OPENSEA_WALLET],
    ["fee recipient", "0x5b3256965e7c3cf26e11fcaf296dfc8807c01073", "opensea", OPENSEA_WALLET],
    ["fee recipient", "0x1838de7d4e4e42c8eb7b204a91e28e9fad14f536", "looksrare", DUNE],
    ["fee recipient", "0xca9337244b5f04cb946391bc8b8a980e988f9a6a", "magiceden", MAGIC_EDEN],
    ["fee recipient", "0xa7673ab3b0949a0efcd818c86c71fff7cd645ac7", "ensvision", `${DUNE}; ${RESERVOIR_FEES}`],
    ["fee recipient", "0x3d279ac86c66f1b419046c287c0f1fab8e86efca", "alienswap", DUNE],
    ["fee recipient", "0x0b22c0359b550da6cf3766d8c0d7ffc00e28a136", "alienswap", RESERVOIR_FEES],
    ["fee recipient", "0xd54094d09109dd8d30340d3dfb66356c838a3b0c", "soundxyz", DUNE],
    ["fee recipient", "0x83db44123e76503203fdf83d2be58be60c15b894", "nfttrader", DUNE],
    ["fee recipient", "0x7a8cdaa8c42b3242d832a95282e3a4363d5e3351", "magically", DUNE],
    ["fee recipient", "0x75c168727666c8f2254c9f7561c53ba9c7b00681", "ordinalsmarket", DUNE],
    ["fee recipient", "0x277c2a47ac1aeb6f77b778dbed48d3d4feea8937", "mintfun", RESERVOIR_FEES],
  ] as const
).map(([by, address, marketplace, source]) => ({ by, address, marketplace, source }));

const ruleMap = (by: SeaportRule["by"]) =>
  new Map(SEAPORT_VENUES.filter((rule) => rule.by === by).map((rule) => [rule.address, rule.marketplace]));
const BY_EXCHANGE = ruleMap("exchange");
const BY_ZONE = ruleMap("zone");
/** Fee wallet → its rule's rank among the fee-wallet rules (the lowest paid rank wins) and marketplace. */
const BY_FEE_RECIPIENT = new Map(
  SEAPORT_VENUES.filter((rule) => rule.by === "fee recipient").map((rule, rank) => [
    rule.address,
    { rank, name: rule.marketplace },
  ]),
);
/** Contracts that emit `OrderFulfilled` as Seaport does, beside Seaport itself. */
const FORKS = [...BY_EXCHANGE.keys()];

interface Item {
  itemType: number;
  token: string;
  identifier: bigint;
  amount: bigint;
  recipient?: string;
}

const isCurrency = (item: Item) => item.itemType === 0 || item.itemType === 1;
const isNft = (item: Item) => item.itemType >= 2 && item.itemType <= 5;
const sameAsset = (a: Item, b: Item) => a.itemType === b.itemType && a.token === b.token;
const contractTypeOf = (item: Item) => (item.itemType === 2 || item.itemType === 4 ? "ERC721" : "ERC1155");

function readItems(data: string, at: number, withRecipient: boolean): Item[] {
  const count = wordNumber(data, at);
  const size = withRecipient ? 5 : 4;
  if (!fits(data, at, count, size)) return [];
  const items: Item[] = [];
  for (let i = 0; i < count; i++) {
    const w = at + 1 + i * size;
    items.push({
      itemType: wordNumber(data, w),
      token: wordAddress(data, w + 1),
      identifier: wordBig(data, w + 2),
      amount: wordBig(data, w + 3),
      ...(withRecipient ? { recipient: wordAddress(data, w + 4) } : {}),
    });
  }
  return items;
}

/** The order's venue (SEAPORT_VENUES): its exchange, its zone, then a marketplace fee wallet it pays. */
function venueOf(exchange: string, zone: string, consideration: readonly Item[]): string {
  const known = BY_EXCHANGE.get(exchange) ?? BY_ZONE.get(zone);
  if (known) return known;
  let paid: { rank: number; name: string } | undefined;
  for (const item of consideration) {
    const rule = BY_FEE_RECIPIENT.get(item.recipient ?? "");
    if (rule && (!paid || rule.rank < paid.rank)) paid = rule;
  }
  return paid?.name ?? "seaport";
}

interface Fill {
  nft: Item;
  currency: Item;
  amount: bigint;
  buyer: string;
  seller: string;
  marketplace: string;
}

function fillOf(log: RawLog): Fill | undefined {
  if (topic0(log) !== ORDER_FULFILLED || log.topics.length !== 3) return undefined;
  const offerer = topicAddress(log.topics[1]!);
  const zone = topicAddress(log.topics[2]!);
  const recipient = wordAddress(log.data, 1);
  const offer = readItems(log.data, wordNumber(log.data, 2) / 32, false);
  const consideration = readItems(log.data, wordNumber(log.data, 3) / 32, true);
  const [offered] = offer;
  if (offer.length !== 1 || !offered || consideration.length === 0) return undefined;
  const marketplace = venueOf(log.address.toLowerCase(), zone, consideration);

  if (isNft(offered)) {
    const currency = consideration[0]!;
    if (!isCurrency(currency)) return undefined;
    let amount = 0n;
    let buyer = recipient;
    for (const item of consideration) {
      if (sameAsset(item, currency)) amount += item.amount;
      else if (sameAsset(item, offered) && item.identifier === offered.identifier) buyer = item.recipient ?? buyer;
      else return undefined;
    }
    return { nft: offered, currency, amount, buyer, seller: offerer, marketplace };
  }
  if (isCurrency(offered)) {
    const nft = consideration[0]!;
    if (!isNft(nft) || !consideration.slice(1).every((item) => sameAsset(item, offered))) return undefined;
    return { nft, currency: offered, amount: offered.amount, buyer: offerer, seller: recipient, marketplace };
  }
  return undefined;
}

/** matchOrders emits two `OrderFulfilled` back to back for one trade: the second one repeats the first. */
function repeatsPrevious(log: RawLog, fill: Fill, tx: TxContext): boolean {
  const index = tx.logs.indexOf(log);
  const previous = index > 0 ? tx.logs[index - 1] : undefined;
  if (!previous || Number.parseInt(previous.logIndex, 16) !== Number.parseInt(log.logIndex, 16) - 1) return false;
  if (previous.address.toLowerCase() !== log.address.toLowerCase()) return false;
  const before = fillOf(previous);
  return before !== undefined && before.nft.token === fill.nft.token && before.nft.identifier === fill.nft.identifier;
}

export function seaport(addresses: readonly string[] = MAINNET_SEAPORTS): Venue {
  return {
    marketplace: "opensea",
    addresses: [...addresses, ...FORKS],
    topics: [ORDER_FULFILLED],
    decode(log, tx) {
      const fill = fillOf(log);
      if (!fill) return undefined;
      if (repeatsPrevious(log, fill, tx)) return [];
      const { nft, currency } = fill;
      return [
        sale(
          log,
          { contract: nft.token, tokenId: nft.identifier, quantity: nft.amount, contractType: contractTypeOf(nft) },
          fill.seller,
          fill.buyer,
          {
            marketplace: fill.marketplace,
            currency: currency.itemType === 0 ? null : currency.token,
            amount: fill.amount,
          },
        ),
      ];
    },
  };
}
