/**
 * Deploys the demo's contracts on a dev chain from real artifacts: Seaport 1.6, its ConduitController and the
 * TestERC20 (standing in for WETH) from `@opensea/seaport-js`; the NFT collections, the price feed and the bulk
 * minter from the committed JSON that `scripts/compile-contracts.ts` builds from `src/demo/contracts/*.sol`.
 * anvil's unlocked dev accounts sign every transaction (`eth_sendTransaction`), so no key is needed.
 */
import { createRequire } from "node:module";
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
  type TransactionReceipt,
  type WalletClient,
} from "viem";
import { ChainmailError } from "../core/errors.js";
import bulkMinterArtifact from "./contracts/BulkMinter.json" with { type: "json" };
import demoErc721Artifact from "./contracts/DemoERC721.json" with { type: "json" };
import demoErc1155Artifact from "./contracts/DemoERC1155.json" with { type: "json" };
import priceFeedArtifact from "./contracts/PriceFeed.json" with { type: "json" };

export type Address = `0x${string}`;

/** Where each demo contract lives (lower-case hex). */
export interface Deployed {
  erc721: Address;
  erc1155: Address;
  seaport: Address;
  conduitController: Address;
  /** TestERC20 from seaport-js, standing in for WETH (18 decimals). */
  weth: Address;
  priceFeed: Address;
  bulkMinter: Address;
}

export interface Artifact {
  abi: Abi;
  bytecode: Hex;
}

const require = createRequire(import.meta.url);
const seaportJs = (path: string): Artifact => {
  const { abi, bytecode } = require(`@opensea/seaport-js/src/artifacts/${path}`) as Artifact;
  return { abi, bytecode };
};
const own = (artifact: { abi: unknown; bytecode: string }): Artifact => ({
  abi: artifact.abi as Abi,
  bytecode: artifact.bytecode as Hex,
});

/** ABI and creation bytecode of every demo contract. */
export const artifacts = {
  seaport: seaportJs("seaport/contracts/Seaport.sol/Seaport.json"),
  conduitController: seaportJs("seaport/contracts/conduit/ConduitController.sol/LocalConduitController.json"),
  weth: seaportJs("src/contracts/test/TestERC20.sol/TestERC20.json"),
  erc721: own(demoErc721Artifact),
  erc1155: own(demoErc1155Artifact),
  priceFeed: own(priceFeedArtifact),
  bulkMinter: own(bulkMinterArtifact),
} satisfies Record<keyof Deployed, Artifact>;

/** Clients for a dev chain plus its unlocked dev accounts. */
export interface ChainConnection {
  publicClient: PublicClient;
  walletClient: WalletClient;
  accounts: Address[];
}

export async function connect(rpcUrl: string): Promise<ChainConnection> {
  const transport = http(rpcUrl, { retryCount: 0 });
  const probe = createPublicClient({ transport });
  const chain = defineChain({
    id: await probe.getChainId(),
    name: "dev chain",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  // Short polling: anvil mines on send, so a receipt is there at once.
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 20 }) as PublicClient;
  const walletClient = createWalletClient({ chain, transport, pollingInterval: 20 });
  const accounts = (await walletClient.getAddresses()).map((a) => a.toLowerCase() as Address);
  if (accounts.length < 5) {
    throw new ChainmailError(
      "INTERNAL",
      `The dev chain at ${rpcUrl} has ${accounts.length} unlocked accounts; 5 needed.`,
    );
  }
  return { publicClient, walletClient, accounts };
}

/** Waits for a transaction's receipt and fails loudly if it reverted. */
async function confirm(chain: ChainConnection, hash: Hex, what: string): Promise<TransactionReceipt> {
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  if (receipt.status !== "success") throw new ChainmailError("INTERNAL", `${what} reverted (tx ${hash}).`);
  return receipt;
}

/** Sends one contract call from `from` and returns its mined receipt. */
export async function call(
  chain: ChainConnection,
  from: Address,
  to: Address,
  artifact: Artifact,
  functionName: string,
  args: readonly unknown[],
  value?: bigint,
): Promise<TransactionReceipt> {
  const hash = await chain.walletClient.writeContract({
    account: from,
    chain: chain.walletClient.chain,
    address: to,
    abi: artifact.abi,
    functionName,
    args,
    ...(value === undefined ? {} : { value }),
  } as Parameters<WalletClient["writeContract"]>[0]);
  return confirm(chain, hash, `${functionName} on ${to}`);
}

export async function deploy(
  chain: ChainConnection,
  from: Address,
  name: string,
  artifact: Artifact,
  args: readonly unknown[] = [],
): Promise<Address> {
  const hash = await chain.walletClient.deployContract({
    account: from,
    chain: chain.walletClient.chain,
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args,
  } as Parameters<WalletClient["deployContract"]>[0]);
  const receipt = await confirm(chain, hash, `deploying ${name}`);
  if (!receipt.contractAddress) throw new ChainmailError("INTERNAL", `deploying ${name} created no contract.`);
  return receipt.contractAddress.toLowerCase() as Address;
}

/** Deploys every demo contract from the first dev account. */
export async function deployAll(rpcUrl: string): Promise<Deployed> {
  const chain = await connect(rpcUrl);
  const deployer = chain.accounts[0]!;
  const conduitController = await deploy(chain, deployer, "ConduitController", artifacts.conduitController);
  const seaport = await deploy(chain, deployer, "Seaport 1.6", artifacts.seaport, [conduitController]);
  return {
    erc721: await deploy(chain, deployer, "DemoERC721", artifacts.erc721),
    erc1155: await deploy(chain, deployer, "DemoERC1155", artifacts.erc1155),
    seaport,
    conduitController,
    weth: await deploy(chain, deployer, "TestERC20 (WETH)", artifacts.weth),
    priceFeed: await deploy(chain, deployer, "PriceFeed", artifacts.priceFeed),
    bulkMinter: await deploy(chain, deployer, "BulkMinter", artifacts.bulkMinter),
  };
}
