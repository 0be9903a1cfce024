/**
 * The job of `chainmail run nft-transactions-by-contract --all`, written by hand: a plain `fetch` loop on
 * `continuation` that prints every record of one contract as one JSON object, page by page.
 * Usage: node fetch-all.mjs <NFTPort base URL> <contract> <api key>
 */
const [base, contract, key] = process.argv.slice(2);
let continuation = "";
let first = true;
process.stdout.write('{"data": {"response": "OK", "transactions": [');
do {
  const more = continuation ? `&continuation=${encodeURIComponent(continuation)}` : "";
  const res = await fetch(`${base}/v0/transactions/nfts/${contract}?chain=ethereum&page_size=50${more}`, {
    headers: { authorization: key },
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const page = await res.json();
  if (page.transactions.length > 0) {
    process.stdout.write((first ? "\n" : ",\n") + page.transactions.map((r) => JSON.stringify(r)).join(",\n"));
    first = false;
  }
  continuation = page.continuation ?? "";
} while (continuation);
process.stdout.write('\n], "continuation": ""}}\n');
