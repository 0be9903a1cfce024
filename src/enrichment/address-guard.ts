/**
 * Where a token URI may send chainmail: whoever deployed the contract wrote it, so it may name a router, a cloud
 * metadata endpoint or a service on the watch's own host. Private, loopback, link-local, unique-local and other
 * non-public addresses (IPv4 and IPv6, IPv4 inside IPv6 included) are refused, for the address a URL names and for
 * every address its host resolves to (metadata-fetch.ts checks those at connection time, and each redirect again),
 * unless CHAINMAIL_FETCH_PRIVATE=true (a local chain's metadata server). No I/O here, and no Node module: a
 * workflow host's bundle carries it.
 */

/** A dotted quad, each part 0 to 255 without leading zeros (the URL parser and resolvers write them so). */
const DOTTED_QUAD = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const isIPv4 = (text: string) => DOTTED_QUAD.test(text);
const isIPv6 = (text: string) => v6Bytes(text) !== undefined;

/** IPv4 ranges that are not the public internet (RFC 6890 and its successors), as [first octets, prefix bits]. */
const PRIVATE_V4: readonly [number[], number][] = [
  [[0], 8], // "this network"
  [[10], 8],
  [[100, 64], 10], // carrier-grade NAT
  [[127], 8],
  [[169, 254], 16], // link-local, cloud metadata endpoints
  [[172, 16], 12],
  [[192, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2], 24], // documentation
  [[192, 88, 99], 24], // 6to4 relay anycast
  [[192, 168], 16],
  [[198, 18], 15], // benchmarking
  [[198, 51, 100], 24],
  [[203, 0, 113], 24],
  [[224], 4], // multicast
  [[240], 4], // reserved, broadcast
];

/** IPv4 text (dotted quad) as 4 bytes; undefined when it is not one. */
function v4Bytes(text: string): number[] | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split(".").map(Number);
}

function inPrefix(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let bit = 0; bit < bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((bytes[byte]! & mask) !== ((prefix[byte] ?? 0) & mask)) return false;
  }
  return true;
}

const privateV4 = (bytes: readonly number[]): boolean =>
  PRIVATE_V4.some(([prefix, bits]) => inPrefix(bytes, prefix, bits));

/** IPv6 text as 16 bytes (a dotted IPv4 tail read too); undefined when it is not one. A zone id is refused. */
export function v6Bytes(text: string): number[] | undefined {
  if (!/^[0-9a-fA-F:.]{2,45}$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string): string[] | undefined => (part === "" ? [] : part.split(":"));
  const left = groupsOf(halves[0]!);
  const right = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (!left || !right) return undefined;
  const all = [...left, ...right];
  // A dotted IPv4 may stand for the last two groups.
  const tail: number[] = [];
  const last = all[all.length - 1];
  if (last?.includes(".")) {
    if (!isIPv4(last) || !text.endsWith(last)) return undefined;
    tail.push(...last.split(".").map(Number));
    (right.length ? right : left).pop();
  }
  const groups = [...left, ...right];
  if (groups.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  const wanted = 8 - tail.length / 2;
  const zeros = halves.length === 2 ? wanted - groups.length : 0;
  if (halves.length === 2 ? zeros < 1 : groups.length !== wanted) return undefined;
  const words = [...left, ...Array<string>(zeros).fill("0"), ...right].map((g) => Number.parseInt(g, 16));
  return [...words.flatMap((w) => [w >> 8, w & 0xff]), ...tail];
}

/** IPv6 ranges that are not the public internet, or carry an IPv4 address to check instead. */
function privateV6(bytes: readonly number[]): boolean {
  const embedded = (from: number) => privateV4(bytes.slice(from, from + 4));
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, and :: and ::1 with it), 64:ff9b::a.b.c.d (NAT64): the IPv4 decides.
  if (inPrefix(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], 96)) return embedded(12);
  if (inPrefix(bytes, [], 96)) return true;
  if (inPrefix(bytes, [0, 0x64, 0xff, 0x9b], 96)) return embedded(12);
  if (inPrefix(bytes, [0, 0x64, 0xff, 0x9b, 0, 1], 48)) return true; // local-use NAT64
  if (inPrefix(bytes, [0x20, 0x02], 16)) return embedded(2); // 6to4 carries its IPv4 in bits 16-47
  return (
    inPrefix(bytes, [0xfc], 7) || // unique-local
    inPrefix(bytes, [0xfe, 0x80], 10) || // link-local
    inPrefix(bytes, [0xfe, 0xc0], 10) || // site-local (deprecated)
    inPrefix(bytes, [0xff], 8) || // multicast
    inPrefix(bytes, [0x01, 0, 0, 0, 0, 0, 0, 0], 64) || // discard
    inPrefix(bytes, [0x20, 0x01, 0x0d, 0xb8], 32) || // documentation
    inPrefix(bytes, [0x20, 0x01, 0, 0], 32) // Teredo: its IPv4 is obfuscated, never a metadata host
  );
}

/** Whether an IP address (v4 or v6 text) is outside the public internet; anything not an IP address counts as one. */
export function isPrivateAddress(address: string): boolean {
  const v4 = v4Bytes(address);
  if (v4) return privateV4(v4);
  const v6 = v6Bytes(address.replace(/^\[|\]$/g, ""));
  return v6 ? privateV6(v6) : true;
}

/**
 * Which private addresses may be reached: all (`true`: CHAINMAIL_FETCH_PRIVATE=true), none (`false`), or these
 * (a set of IP addresses as the resolver and the URL parser write them: one local metadata server).
 */
export type PrivateAllowance = boolean | ReadonlySet<string>;

/** Whether an address may be reached: public, or a private one allowed. */
export function mayReach(address: string, allowPrivate: PrivateAllowance): boolean {
  if (allowPrivate === true || !isPrivateAddress(address)) return true;
  return allowPrivate !== false && allowPrivate.has(address);
}

/** Why a URL may not be fetched (or put in a mail), or undefined when it may. `https` alone with `httpsOnly`. */
export function urlRefusal(
  url: string,
  options: { allowPrivate: PrivateAllowance; httpsOnly?: boolean | undefined },
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a URL";
  }
  const schemes = options.httpsOnly ? ["https:"] : ["http:", "https:"];
  if (!schemes.includes(parsed.protocol)) return `scheme ${parsed.protocol} is not ${schemes.join(" or ")}`;
  if (parsed.username || parsed.password) return "a URL with credentials";
  if (options.allowPrivate === true) return undefined;
  // The URL parser has already turned 0x7f.1, 2130706433 and the like into dotted quads.
  const host = parsed.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (isIPv4(host) || isIPv6(host))
    return mayReach(host, options.allowPrivate) ? undefined : `a private address (${host})`;
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || !host.includes(".")) {
    return `a local host name (${host})`;
  }
  return undefined;
}
