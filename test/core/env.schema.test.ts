/**
 * The environment's one schema (src/core/env.ts): every variable's value is checked by it, refused with a message
 * naming the variable, its value and the rule, and docs/configuration.md's table is the schema's.
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { TSchema } from "@sinclair/typebox";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withTable } from "../../scripts/configuration-table.js";
import { loadConfig } from "../../src/core/config.js";
import { checkSettings, EnvSchema, MAX_DURATION_MS, proxySettings, ruleOf, setting } from "../../src/core/env.js";
import { ChainmailError } from "../../src/core/errors.js";

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ChainmailError);
    return (err as ChainmailError).toPayload();
  }
  throw new Error("not refused");
};

describe("the environment schema", () => {
  it("docs/configuration.md's table is the schema's (npx tsx scripts/configuration-table.ts writes it)", () => {
    const doc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    expect(withTable(doc)).toBe(doc);
  });

  it("fills defaults and reads values by the schema's types", () => {
    expect(setting({}, "MAILJET_CONCURRENCY")).toBe(4);
    expect(setting({ MAILJET_CONCURRENCY: "" }, "MAILJET_CONCURRENCY")).toBe(4);
    expect(setting({ MAILJET_CONCURRENCY: "9" }, "MAILJET_CONCURRENCY")).toBe(9);
    expect(setting({}, "NFTPORT_TIMEOUT_MS")).toBeUndefined();
    expect(setting({ EMAIL_TRANSPORT: "smtp" }, "EMAIL_TRANSPORT")).toBe("smtp");
    const config = loadConfig({ CHAINMAIL_TIMEOUT_MS: "700", OPENSEA_TIMEOUT_MS: "900", INDEX_DATABASE_URL: "x.db" });
    expect([config.nftport.timeoutMs, config.opensea.timeoutMs, config.indexDb]).toEqual([700, 900, "x.db"]);
  });

  it("refuses a bad value naming the variable, the value and the rule", () => {
    expect(refusal(() => setting({ NFT_SOURCE: "foo" }, "NFT_SOURCE"))).toEqual({
      error: 'Setting NFT_SOURCE="foo" is invalid: must be one of nftport, index, opensea, index+opensea, service.',
      details: { code: "invalid_input", setting: "NFT_SOURCE" },
    });
    expect(refusal(() => loadConfig({ CHAINMAIL_TIMEOUT_MS: "abc" })).error).toBe(
      'Setting CHAINMAIL_TIMEOUT_MS="abc" is invalid: must be an integer from 1 to 2147483647 (ms; Node\'s longest timer, about 24.8 days).',
    );
    expect(refusal(() => setting({ CHAINMAIL_PORT: "70000" }, "CHAINMAIL_PORT")).error).toBe(
      'Setting CHAINMAIL_PORT="70000" is invalid: must be an integer from 0 to 65535.',
    );
    expect(refusal(() => loadConfig({ ETH_USD_FEED: "0x12" })).error).toBe(
      'Setting ETH_USD_FEED="0x12" is invalid: must be an address (0x followed by 40 hex digits).',
    );
  });

  it("refuses a URL that is not an absolute http(s) one, naming the reason and never showing the value", () => {
    const endpoint = "it must be an absolute http:// or https:// URL, e.g. http://localhost:8545.";
    expect(refusal(() => loadConfig({ INDEX_RPC_URL: "localhost:8545" }))).toEqual({
      error: `Setting INDEX_RPC_URL is invalid: it does not start with http:// or https://; ${endpoint}`,
      details: { code: "invalid_input", setting: "INDEX_RPC_URL" },
    });
    // An endpoint may hold a path and a query (some providers take the key there).
    expect(setting({ INDEX_RPC_URL: "https://rpc.example/v2/k?key=1" }, "INDEX_RPC_URL")).toBe(
      "https://rpc.example/v2/k?key=1",
    );
    const base =
      "it must be an absolute http:// or https:// URL, e.g. http://localhost:8545, without ?query or #fragment.";
    for (const [raw, reason] of [
      ["api.nftport.xyz", "it does not start with http:// or https://"],
      ["ftp://files.example", "it does not start with http:// or https://"],
      ["http://exa mple.com", "it holds a space or a control character"],
      ["http://example.com\n", "it holds a space or a control character"],
      ["http://[::1", "it is not a well-formed URL"],
      ["http://user:%zz@proxy.example", "its user or password holds a % not followed by two hex digits"],
      ["http://example.com/v0?x=1", "it has a ?query or a #fragment"],
    ]) {
      expect(refusal(() => loadConfig({ NFTPORT_BASE_URL: raw })).error).toBe(
        `Setting NFTPORT_BASE_URL is invalid: ${reason}; ${base}`,
      );
    }
    // A base URL may have a path prefix (a gateway in front of the upstream).
    expect(loadConfig({ NFTPORT_BASE_URL: "https://gw.example/nftport/" }).nftport.baseUrl).toBe(
      "https://gw.example/nftport",
    );
    // A proxy is an origin, with a login if it needs one: undici refuses anything more.
    for (const ok of ["http://localhost:3128", "https://user:p%40ss@proxy.example:3128/", "HTTP://[::1]:8080"])
      expect(setting({ HTTPS_PROXY: ok }, "HTTPS_PROXY")).toBe(ok);
    for (const bad of ["http://proxy.example/path", "http://proxy.example?x", "http://proxy.example#a"])
      expect(refusal(() => loadConfig({ HTTPS_PROXY: bad })).error).toBe(
        "Setting HTTPS_PROXY is invalid: it has a path, a ?query or a #fragment; it must be an absolute http:// or https:// URL, e.g. http://localhost:3128, without a path, ?query or #fragment.",
      );
    expect(refusal(() => loadConfig({ SMTP_URL: "smtp.example.com:587" })).error).toBe(
      "Setting SMTP_URL is invalid: it does not start with smtp:// or smtps://; it must be an smtp:// or smtps:// URL, e.g. smtps://user:password@smtp.example.com:465.",
    );
  });

  it("reads a proxy from its lower-case variable when the upper-case one is not set, refused under the name given", () => {
    expect(proxySettings({ https_proxy: "http://p:1", NO_PROXY: "a", no_proxy: "b" })).toEqual({
      httpProxy: undefined,
      httpsProxy: "http://p:1",
      noProxy: "a",
    });
    // Set but empty: no proxy, whatever the lower-case one says (as before).
    expect(proxySettings({ HTTP_PROXY: "", http_proxy: "http://p:1" }).httpProxy).toBeUndefined();
    expect(refusal(() => loadConfig({ http_proxy: "proxy:3128" })).details).toEqual({
      code: "invalid_input",
      setting: "http_proxy",
    });
    expect(refusal(() => checkSettings({ https_proxy: "x" })).error).toMatch(/^Setting https_proxy is invalid: /);
  });

  it("shows at most 256 characters of a value", () => {
    expect(refusal(() => setting({ NFT_SOURCE: "x".repeat(10_000) }, "NFT_SOURCE")).error).toBe(
      `Setting NFT_SOURCE="${"x".repeat(252)}... is invalid: must be one of nftport, index, opensea, index+opensea, service.`,
    );
  });

  it("refuses a listen address that is neither a host name nor an IP address, showing it", () => {
    for (const ok of ["127.0.0.1", "0.0.0.0", "::", "::1", "::ffff:127.0.0.1", "localhost", "my-host.local."])
      expect(setting({ CHAINMAIL_HOST: ok }, "CHAINMAIL_HOST")).toBe(ok);
    for (const bad of ["__proto__", "256.1.1.1", "1.2.3", "-x", "a..b", "[::1]", "::1]/x", "host:8080", "a b"]) {
      expect(refusal(() => setting({ CHAINMAIL_HOST: bad }, "CHAINMAIL_HOST")).error).toBe(
        `Setting CHAINMAIL_HOST=${JSON.stringify(bad)} is invalid: it is neither a host name nor an IP address; it must be a host name or an IP address, e.g. 127.0.0.1, ::1 or localhost.`,
      );
    }
  });

  it("bounds every number: durations by Node's longest timer (2^31-1 ms), each maximum in the docs' table", () => {
    const doc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    for (const [name, schema] of Object.entries(EnvSchema.properties) as [string, TSchema][]) {
      if (schema.type !== "integer") continue;
      expect(schema.maximum, name).toBeTypeOf("number");
      if (name.endsWith("_MS")) expect(schema.maximum, name).toBeLessThanOrEqual(MAX_DURATION_MS);
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${name}\` `));
      expect(row, name).toContain(`| ${schema.minimum} to ${schema.maximum} `);
      // The maximum is accepted, one more is refused naming the variable.
      expect(setting({ [name]: String(schema.maximum) }, name as never)).toBe(schema.maximum);
      expect(refusal(() => setting({ [name]: String(schema.maximum + 1) }, name as never)).details).toEqual({
        code: "invalid_input",
        setting: name,
      });
    }
  });

  it("every URL and host setting is checked by its form", () => {
    for (const [name, schema] of Object.entries(EnvSchema.properties) as [string, TSchema][]) {
      // INDEX_DATABASE_URL is a file path or a postgres:// URL; NO_PROXY a list of hosts.
      if (/_URL$|_PROXY$/.test(name) && name !== "INDEX_DATABASE_URL" && name !== "NO_PROXY")
        expect(schema["x-format"], name).toMatch(/-url$/);
      if (/_HOST$/.test(name)) expect(schema["x-format"], name).toBe("host");
    }
  });

  it("every variable has a group, a description and a rule in words", () => {
    for (const [name, schema] of Object.entries(EnvSchema.properties)) {
      expect(schema["x-group"], name).toBeTypeOf("string");
      expect(schema.description, name).toBeTypeOf("string");
      expect(ruleOf(schema), name).not.toBe("");
    }
  });

  it("accepts a value exactly when it follows the rule, and refuses the others as invalid_input", () => {
    const names = Object.keys(EnvSchema.properties) as (keyof typeof EnvSchema.properties)[];
    const follows = (schema: TSchema, raw: string): boolean => {
      if (schema.type === "integer") {
        const n = Number(raw);
        return Number.isInteger(n) && n >= schema.minimum && n <= schema.maximum;
      }
      if (schema.anyOf) return schema.anyOf.some((v: TSchema) => v.const === raw);
      if (schema["x-format"] === "host") {
        const name = /^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]*[a-z0-9])?\.?$/i;
        const lastLabel = raw.replace(/\.$/, "").split(".").at(-1)!;
        return (isIP(raw) !== 0 && !raw.includes("%")) || (name.test(raw) && !/^\d+$/.test(lastLabel));
      }
      if (schema["x-format"]) {
        const format = schema["x-format"];
        const schemes =
          format === "smtp-url" ? ["smtp:", "smtps:"] : format === "ws-url" ? ["ws:", "wss:"] : ["http:", "https:"];
        if (/[\s\p{Cc}]/u.test(raw) || !URL.canParse(raw)) return false;
        const url = new URL(raw);
        const rest =
          format === "proxy-url"
            ? url.pathname + url.search + url.hash
            : format === "base-url"
              ? url.search + url.hash
              : "";
        return (
          schemes.includes(url.protocol) &&
          raw.toLowerCase().startsWith(`${url.protocol}//`) &&
          url.hostname !== "" &&
          (rest === "" || rest === "/")
        );
      }
      return schema.pattern === undefined || new RegExp(schema.pattern).test(raw);
    };
    const raws = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.integer({ min: -5, max: 70_000 }).map(String),
      fc.webUrl({ withQueryParameters: true, withFragments: true, authoritySettings: { withUserInfo: true } }),
      fc.webUrl({ validSchemes: ["ws", "wss"], withQueryParameters: true }),
      fc.domain(),
      fc.ipV4(),
      fc.ipV6(),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        raws.filter((r) => r !== ""),
        (name, raw) => {
          const schema: TSchema = EnvSchema.properties[name];
          let outcome: unknown;
          try {
            outcome = setting({ [name]: raw }, name);
          } catch (err) {
            outcome = err;
          }
          if (follows(schema, raw)) expect(outcome).toBe(schema.type === "integer" ? Number(raw) : raw);
          else {
            expect(outcome).toBeInstanceOf(ChainmailError);
            expect((outcome as ChainmailError).toPayload().details).toEqual({ code: "invalid_input", setting: name });
            // The value is shown unless it may hold a secret (a URL); a form's refusal says what is wrong with it.
            // …and at most 256 characters of it.
            const json = JSON.stringify(raw);
            const shown = schema["x-secret"] ? "" : `=${json.length > 256 ? `${json.slice(0, 253)}...` : json}`;
            const reason = schema["x-format"] ? "(it [^;]*; it )?" : "";
            const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
            expect((outcome as ChainmailError).message).toMatch(
              new RegExp(
                `^${literal(`Setting ${name}${shown} is invalid: `)}${reason}${literal(`must be ${ruleOf(schema)}.`)}$`,
              ),
            );
          }
        },
      ),
      { numRuns: Number(process.env.PROPS_RUNS ?? 300) },
    );
  });
});
