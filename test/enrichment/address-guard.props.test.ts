/**
 * The address guard of token URIs (src/enrichment/address-guard.ts) against an independent reading of the same
 * ranges (numbers, not bit prefixes): every private, loopback, link-local and unique-local address is refused in
 * every spelling a URL or a resolver gives it (dotted, integer, hex, IPv4-mapped, NAT64, 6to4), and public ones
 * pass. Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */

import { isIPv6 } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPrivateAddress, urlRefusal, v6Bytes } from "../../src/enrichment/address-guard.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 35);
const options = { numRuns: RUNS, seed: SEED };

const ip4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
const range = (first: string, bits: number): [number, number] => {
  const start = first.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
  return [start, start + 2 ** (32 - bits) - 1];
};
/** The non-public IPv4 ranges as [first, last] numbers. */
const PRIVATE_V4_RANGES = [
  range("0.0.0.0", 8),
  range("10.0.0.0", 8),
  range("100.64.0.0", 10),
  range("127.0.0.0", 8),
  range("169.254.0.0", 16),
  range("172.16.0.0", 12),
  range("192.0.0.0", 24),
  range("192.0.2.0", 24),
  range("192.88.99.0", 24),
  range("192.168.0.0", 16),
  range("198.18.0.0", 15),
  range("198.51.100.0", 24),
  range("203.0.113.0", 24),
  range("224.0.0.0", 4),
  range("240.0.0.0", 4),
];
const privateV4 = (n: number) => PRIVATE_V4_RANGES.some(([a, b]) => n >= a && n <= b);

const anyV4 = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const inPrivateV4 = fc
  .tuple(fc.constantFrom(...PRIVATE_V4_RANGES), fc.nat())
  .map(([[a, b], k]) => a + (k % (b - a + 1)));
const hex16 = (n: number) => (n >>> 16).toString(16);
const low16 = (n: number) => (n & 0xffff).toString(16);

/** Every way an IPv6 address may carry this IPv4 one, where the IPv4 alone decides. */
const carriers = (n: number) => [
  `::ffff:${ip4(n)}`,
  `::ffff:${hex16(n)}:${low16(n)}`,
  `64:ff9b::${ip4(n)}`,
  `2002:${hex16(n)}:${low16(n)}::1`,
];

describe("IPv4 addresses", () => {
  it("are private exactly when the ranges say, in every IPv6 carrier too", () => {
    fc.assert(
      fc.property(fc.oneof(anyV4, inPrivateV4), (n) => {
        const expected = privateV4(n);
        expect(isPrivateAddress(ip4(n))).toBe(expected);
        for (const carried of carriers(n)) expect(isPrivateAddress(carried)).toBe(expected);
      }),
      options,
    );
  });

  it("are refused in a URL in any spelling the URL parser accepts, unless private targets are allowed", () => {
    fc.assert(
      fc.property(inPrivateV4, fc.constantFrom("http", "https"), (n, scheme) => {
        const spellings = [ip4(n), String(n), `0x${n.toString(16)}`, `[::ffff:${ip4(n)}]`, `[64:ff9b::${ip4(n)}]`];
        for (const host of spellings) {
          const url = `${scheme}://${host}/meta/1.json`;
          expect(urlRefusal(url, { allowPrivate: false })).toMatch(/private/);
          expect(urlRefusal(url, { allowPrivate: true })).toBeUndefined();
        }
      }),
      options,
    );
  });
});

describe("IPv6 addresses", () => {
  const group = fc.integer({ min: 0, max: 0xffff });
  const groups = fc.array(group, { minLength: 8, maxLength: 8 });
  const text = (g: number[]) => g.map((w) => w.toString(16)).join(":");
  /** Non-public by their first bits: unique-local, link-local, site-local, multicast, documentation. */
  const privatePrefixes: [number, number][] = [
    [0xfc00, 0xfe00],
    [0xfe80, 0xffc0],
    [0xfec0, 0xffc0],
    [0xff00, 0xff00],
  ];

  it("in unique-local, link-local, site-local and multicast ranges are private, in any spelling", () => {
    fc.assert(
      fc.property(groups, fc.constantFrom(...privatePrefixes), (g, [prefix, mask]) => {
        const first = (prefix & mask) | (g[0]! & ~mask & 0xffff);
        const address = text([first, ...g.slice(1)]);
        expect(isPrivateAddress(address)).toBe(true);
        // The URL parser's own spelling (compressed, lower case) is read the same.
        const host = new URL(`http://[${address}]/`).hostname;
        expect(isPrivateAddress(host)).toBe(true);
        expect(urlRefusal(`https://${host}/x.json`, { allowPrivate: false })).toMatch(/private/);
      }),
      options,
    );
  });

  it("in global unicast (2400::/6, outside the special ones) are public", () => {
    fc.assert(
      fc.property(groups, (g) => {
        const first = 0x2400 | (g[0]! & 0x03ff);
        const address = text([first, ...g.slice(1)]);
        expect(isPrivateAddress(address)).toBe(false);
        expect(urlRefusal(`https://[${address}]/x.json`, { allowPrivate: false })).toBeUndefined();
      }),
      options,
    );
  });

  it("read back to the same 16 bytes from the URL parser's compressed spelling", () => {
    fc.assert(
      fc.property(groups, (g) => {
        const host = new URL(`http://[${text(g)}]/`).hostname.replace(/^\[|\]$/g, "");
        expect(v6Bytes(host)).toEqual(g.flatMap((w) => [w >> 8, w & 255]));
      }),
      options,
    );
  });

  it("are read exactly when Node's own parser (node:net) says the text is an IPv6 address", () => {
    const piece = fc.oneof(
      fc.constantFrom(":", "::", ".", "0", "1", "ffff", "FFFF", "12345", "1.2.3.4", "255.255.255.255", "256.1.1.1"),
      fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        expect(v6Bytes(text) !== undefined, text).toBe(isIPv6(text));
      }),
      options,
    );
    fc.assert(
      fc.property(groups, fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 8 }), (g, from, length) => {
        // Any run of groups compressed to "::", as RFC 5952 and others write it.
        const start = Math.min(from, 7);
        const end = Math.min(8, start + Math.max(1, length));
        const text = `${g
          .slice(0, start)
          .map((w) => w.toString(16))
          .join(":")}::${g
          .slice(end)
          .map((w) => w.toString(16))
          .join(":")}`;
        const zeroed = g.map((w, i) => (i >= start && i < end ? 0 : w));
        expect(isIPv6(text)).toBe(true);
        expect(v6Bytes(text)).toEqual(zeroed.flatMap((w) => [w >> 8, w & 255]));
      }),
      options,
    );
  });

  it("loopback, unspecified and IPv4-compatible ones are private", () => {
    for (const address of ["::1", "::", "0:0:0:0:0:0:0:1", "::127.0.0.1", "::8.8.8.8", "fe80::1%eth0"]) {
      expect(isPrivateAddress(address)).toBe(true);
    }
  });
});

describe("URLs", () => {
  it("never throw, and only http(s) without credentials to a public host passes", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.boolean(), (text, allowPrivate) => {
        const refusal = urlRefusal(text, { allowPrivate });
        if (refusal === undefined) {
          const url = new URL(text);
          expect(["http:", "https:"]).toContain(url.protocol);
          expect(url.username + url.password).toBe("");
        }
      }),
      options,
    );
  });

  it("refuse local names, other schemes and credentials; https only where asked", () => {
    const refused = [
      "http://localhost/x",
      "http://LOCALHOST./x",
      "http://metadata.localhost/x",
      "http://printer.local/x",
      "http://intranet/x",
      "file:///etc/passwd",
      "ftp://example.com/x",
      "gopher://example.com/",
      "https://user:pw@example.com/x",
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
    ];
    for (const url of refused) expect(urlRefusal(url, { allowPrivate: false }), url).toBeDefined();
    expect(urlRefusal("https://example.com/1.json", { allowPrivate: false })).toBeUndefined();
    expect(urlRefusal("http://example.com/1.png", { allowPrivate: false, httpsOnly: true })).toMatch(/scheme/);
  });
});
