/**
 * A source or a transport is one definition in one list (src/sources/catalog.ts, src/transports/catalog.ts): every
 * place that offers them reads that list. A source added through the list is opened by the retrievers and offered
 * by the CLI's help, the OpenAPI document, the workflow hosts (the Node-RED editor as generated, the options both
 * hosts list) and the docs' table; the settings schema, which `core` holds (it may import nothing but `schemas`),
 * is tied to the list by a check that names each variable and value it lacks.
 */
import { readFileSync } from "node:fs";
import type { TSchema } from "@sinclair/typebox";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withConfigEditor } from "../../packages/node-red-contrib-chainmail/src/config-editor.js";
import { choicesTable, withTable } from "../../scripts/configuration-table.js";
import { N8N_MANIFEST, NODE_RED_HTML, withN8nCredentials } from "../../scripts/workflow-options.js";
import { buildProgram } from "../../src/cli/program.js";
import { EMAIL_TRANSPORTS, EnvSchema, NFT_SOURCES } from "../../src/core/env.js";
import { runNodeWith } from "../../src/core/node.js";
import { hostSetting, settingsEnv, type UpstreamDefinition } from "../../src/core/upstream-definition.js";
import { nftTransactionsByContract } from "../../src/nodes/index.js";
import { buildOpenApi } from "../../src/server/openapi.js";
import {
  addNftSource,
  indexWithOpenSeaCombination,
  nftSourceChoices,
  nftSources,
  type SourceDefinition,
  workflowSources,
} from "../../src/sources/catalog.js";
import { nftportSource } from "../../src/sources/nftport/client.js";
import { mailTransports } from "../../src/transports/catalog.js";
import { testConfig } from "../support/helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_1155, standardDataset } from "../upstreams/nftport-data.js";

const schemaEntries = EnvSchema.properties as Record<string, TSchema | undefined>;

/** What the settings schema lacks of the lists: each variable a definition reads, each value of the choosing ones. */
function settingsSchemaLacks(): string[] {
  const definitions: UpstreamDefinition[] = [...nftSources, ...mailTransports];
  const variables = definitions.flatMap((d) => [...d.variables, ...d.settings.map((s) => s.env)]);
  return [
    ...new Set([
      ...variables.filter((name) => schemaEntries[name] === undefined),
      ...[...nftSources, indexWithOpenSeaCombination]
        .filter((s) => !(NFT_SOURCES as readonly string[]).includes(s.id))
        .map((s) => `NFT_SOURCE=${s.id}`),
      ...mailTransports
        .filter((t) => !(EMAIL_TRANSPORTS as readonly string[]).includes(t.id))
        .map((t) => `EMAIL_TRANSPORT=${t.id}`),
    ]),
  ];
}

/** `chainmail --help` as printed (the choices come after the commands). */
function cliHelp(): string {
  let out = "";
  const program = buildProgram().configureOutput({ writeOut: (text) => (out += text) });
  program.outputHelp();
  return out;
}

const openApiText = () => JSON.stringify(buildOpenApi([], { auth: false, bodyLimitBytes: 1, version: "0" }));

/** A second NFTPort-compatible API, as a new source would be: a definition and its settings. */
const fakechain: SourceDefinition = {
  id: "fakechain",
  title: "Fakechain",
  description: "Fakechain's records (an NFTPort-compatible API, for this test).",
  portable: true,
  help: ["Fakechain: FAKECHAIN_API_KEY"],
  variables: ["FAKECHAIN_API_KEY", "FAKECHAIN_BASE_URL"],
  settings: [
    hostSetting({
      key: "apiKey",
      env: "FAKECHAIN_API_KEY",
      title: "API Key",
      description: "The Fakechain key.",
      secret: true,
      nodeRed: { field: "fakechainApiKey", label: "Fakechain key" },
    }),
    {
      key: "baseUrl",
      env: "FAKECHAIN_BASE_URL",
      title: "Base URL",
      description: "Origin of Fakechain.",
      default: "https://fakechain.invalid",
      nodeRed: { field: "fakechainBaseUrl", label: "Fakechain URL" },
    },
  ],
  n8nCredential: "chainmailFakechainApi",
  capabilities: { orderBook: false },
  operatorApiKey: (config) => config.nftport.apiKey,
  open: () => ({ ...nftportSource, name: "Fakechain" }),
};

describe("the lists of sources and transports", () => {
  it("are what the settings schema holds: every variable they read, every value of NFT_SOURCE and EMAIL_TRANSPORT", () => {
    expect(settingsSchemaLacks()).toEqual([]);
    expect(new Set(NFT_SOURCES)).toEqual(new Set(nftSourceChoices().map((choice) => choice.id)));
    expect(new Set(EMAIL_TRANSPORTS)).toEqual(new Set(mailTransports.map((transport) => transport.id)));
  });

  it("take each default from the settings schema, so it is written once", () => {
    for (const definition of [...nftSources, ...mailTransports])
      for (const setting of definition.settings) {
        const fallback = schemaEntries[setting.env]?.default;
        expect(setting.default, setting.env).toBe(fallback === undefined ? undefined : String(fallback));
      }
    const nftport = nftSources.find((source) => source.id === "nftport")!;
    expect(nftport.settings.find((s) => s.key === "baseUrl")?.default).toBe("https://api.nftport.xyz");
  });

  it("are what the committed generated files say (docs/configuration.md, the Node-RED editor, n8n's manifest)", () => {
    const doc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    expect(withTable(doc)).toBe(doc);
    const html = readFileSync(NODE_RED_HTML, "utf8");
    expect(withConfigEditor(html)).toBe(html);
    const manifest = readFileSync(N8N_MANIFEST, "utf8");
    expect(withN8nCredentials(manifest)).toBe(manifest);
  });

  it("name each n8n credential's class: its name, its fields, their defaults", () => {
    const manifest = JSON.parse(readFileSync(N8N_MANIFEST, "utf8")) as { n8n: { credentials: string[] } };
    const classes = manifest.n8n.credentials.map((path) =>
      readFileSync(
        new URL(
          `../../packages/n8n-nodes-chainmail/${path.replace(/^dist\//, "").replace(/\.js$/, ".ts")}`,
          import.meta.url,
        ),
        "utf8",
      ),
    );
    for (const definition of [...nftSources, ...mailTransports].filter((d) => d.portable && d.n8nCredential)) {
      const text = classes.find((c) => c.includes(`name = "${definition.n8nCredential}";`));
      expect(text, definition.n8nCredential).toBeDefined();
      for (const setting of definition.settings) {
        expect(text).toContain(`name: "${setting.key}",`);
        if (setting.default) expect(text).toContain(`default: ${JSON.stringify(setting.default)},`);
      }
    }
  });

  it("are what the packages' READMEs list: each Node-RED field, each n8n credential, each default", () => {
    const readme = (pkg: string) => readFileSync(new URL(`../../packages/${pkg}/README.md`, import.meta.url), "utf8");
    const nodeRed = readme("node-red-contrib-chainmail");
    const n8n = readme("n8n-nodes-chainmail");
    for (const definition of [...nftSources, ...mailTransports].filter((d) => d.portable)) {
      if (definition.n8nCredential) expect(n8n).toContain(`\`${definition.n8nCredential}\``);
      for (const setting of definition.settings) {
        if (setting.nodeRed) expect(nodeRed).toContain(`\`${setting.nodeRed.field}\``);
        if (setting.default) {
          expect(nodeRed).toContain(`else \`${setting.default}\``);
          expect(n8n).toContain(`(default \`${setting.default}\`)`);
        }
      }
    }
  });

  it("turn any values a host gathered into settings of the definition's variables alone", () => {
    const entries = [...nftSources, ...mailTransports];
    fc.assert(
      fc.property(
        fc.constantFrom(...entries),
        fc.dictionary(
          fc.string({ maxLength: 12 }),
          fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null)),
        ),
        fc.boolean(),
        (entry, values, defaults) => {
          const env = settingsEnv(entry, values, "NFT_SOURCE", { defaults });
          const allowed = new Set(["NFT_SOURCE", ...entry.settings.map((s) => s.env)]);
          for (const [name, value] of Object.entries(env)) {
            expect(allowed.has(name)).toBe(true);
            expect(value).toBe(value.trim());
            expect(value).not.toBe("");
          }
        },
      ),
    );
  });
});

describe("a source added through the list", () => {
  let nftport: NftportServer;
  let remove: () => void;
  beforeAll(async () => {
    nftport = await startNftport(standardDataset());
    remove = addNftSource(fakechain);
  });
  afterAll(async () => {
    remove();
    await nftport.close();
  });

  it("is the source a configuration naming it opens", async () => {
    const config = { ...testConfig({ NFTPORT_BASE_URL: nftport.url, NFTPORT_API_KEY: VALID_KEY }) };
    // The core's schema does not admit the value (see below): the config is built with it, as a host would.
    const out = await runNodeWith(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_1155, page_size: 2 } },
      { config: { ...config, nftSource: "fakechain" as never } },
    );
    expect(out.error).toBeUndefined();
    expect(out.data?.transactions).toHaveLength(2);
  });

  it("is offered by the CLI's help, the OpenAPI document and the docs' table", () => {
    expect(cliHelp()).toContain("\n  NFT_SOURCE=fakechain      Fakechain: FAKECHAIN_API_KEY\n");
    expect(openApiText()).toContain("`NFT_SOURCE=fakechain`: Fakechain's records");
    expect(choicesTable()).toMatch(
      /\| `NFT_SOURCE=fakechain` +\| Fakechain's records[^|]*\| `FAKECHAIN_API_KEY`, `FAKECHAIN_BASE_URL` +\| no +\| yes +\|/,
    );
  });

  it("is offered by the workflow hosts: their options, and the Node-RED editor as generated", () => {
    expect(workflowSources().map((source) => source.id)).toEqual(["nftport", "opensea", "service", "fakechain"]);
    const html = withConfigEditor(readFileSync(NODE_RED_HTML, "utf8"));
    expect(html).toContain('<option value="fakechain">Fakechain</option></select>');
    expect(html).toContain('$(".chainmail-source-fakechain").toggle(source === "fakechain");');
    expect(html).toContain('fakechainBaseUrl: { value: "" },');
    expect(html).toContain('fakechainApiKey: { type: "password" },');
    expect(html).toContain(
      '<div class="form-row chainmail-source-fakechain"><label for="node-config-input-fakechainBaseUrl">Fakechain URL</label><input type="text" id="node-config-input-fakechainBaseUrl" placeholder="https://fakechain.invalid"></div>',
    );
  });

  it("is listed in the n8n package's manifest as generated", () => {
    const manifest = JSON.parse(withN8nCredentials(readFileSync(N8N_MANIFEST, "utf8"))) as {
      n8n: { credentials: string[] };
    };
    expect(manifest.n8n.credentials).toContain("dist/credentials/ChainmailFakechainApi.credentials.js");
  });

  it("is named by the settings schema's check: its variables and its value, one line each in src/core/env.ts", () => {
    expect(settingsSchemaLacks()).toEqual(["FAKECHAIN_API_KEY", "FAKECHAIN_BASE_URL", "NFT_SOURCE=fakechain"]);
  });

  it("leaves every place as it was once removed", () => {
    remove();
    expect(cliHelp()).not.toContain("fakechain");
    expect(openApiText()).not.toContain("fakechain");
    expect(settingsSchemaLacks()).toEqual([]);
    remove = addNftSource(fakechain);
  });
});
