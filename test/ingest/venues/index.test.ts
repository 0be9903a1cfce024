/**
 * The venue table (venues/index.ts): each topic read by exactly one venue, the topics the `eth_getLogs` filter asks
 * for, and the exchange addresses whose unread logs are counted; configured Seaport addresses replace the mainnet
 * ones.
 */
import { describe, expect, it } from "vitest";
import { blur } from "../../../src/ingest/venues/blur.js";
import { MAINNET_SEAPORTS, venueTable } from "../../../src/ingest/venues/index.js";
import { ORDER_FULFILLED } from "../../../src/ingest/venues/seaport.js";
import { sudoswap } from "../../../src/ingest/venues/sudoswap.js";
import { WYVERN_V2, wyvern } from "../../../src/ingest/venues/wyvern.js";
import { x2y2 } from "../../../src/ingest/venues/x2y2.js";
import { address } from "../../support/index-helpers.js";

describe("venueTable", () => {
  const table = venueTable();

  it("reads each topic with one venue, the one that lists it, and asks for every topic once", () => {
    expect(new Set(table.topics).size).toBe(table.topics.length);
    expect(table.topics).toEqual([...table.byTopic.keys()]);
    for (const [topic, venue] of table.byTopic) expect(venue.topics).toContain(topic);
    for (const venue of [blur, sudoswap, wyvern, x2y2]) {
      for (const topic of venue.topics) expect(table.byTopic.get(topic)).toBe(venue);
    }
    expect(table.byTopic.get(ORDER_FULFILLED)?.addresses).toEqual(expect.arrayContaining(MAINNET_SEAPORTS));
  });

  it("counts the logs of every named exchange, none for venues of any address", () => {
    for (const venue of [blur, wyvern, x2y2]) {
      for (const at of venue.addresses) expect(table.exchanges).toContain(at);
    }
    expect(table.exchanges).toContain(WYVERN_V2);
    for (const at of MAINNET_SEAPORTS) expect(table.exchanges).toContain(at);
    expect(table.exchanges).not.toContain("any");
    for (const at of table.exchanges) expect(at).toMatch(/^0x[0-9a-f]{40}$/);
  });

  it("takes the configured Seaport addresses instead of the mainnet ones", () => {
    const mine = address(0x5ea9047);
    const configured = venueTable([mine]);
    expect(configured.exchanges).toContain(mine);
    for (const at of MAINNET_SEAPORTS) expect(configured.exchanges).not.toContain(at);
    expect(table.exchanges).not.toContain(mine);
    expect(configured.topics).toEqual(table.topics);
  });
});
