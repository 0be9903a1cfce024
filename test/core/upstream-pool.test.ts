/**
 * src/core/upstream-pool.ts on its own: `splitUrl` (undici's origin and path of a URL, without parsing it), and the
 * three errors every engine rejects with, each a `ChainmailError` whose code, message and details core/http.ts and
 * its callers read. The engines themselves are test/core/pools/.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { AnswerTooLarge, AttemptTimeout, CutOffAnswer, splitUrl } from "../../src/core/upstream-pool.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 200);

describe("splitUrl", () => {
  it("splits at the first slash after the host, keeping the query with the path", () => {
    expect(splitUrl("http://127.0.0.1:8545/v2/key?x=1&y=/z")).toEqual({
      origin: "http://127.0.0.1:8545",
      path: "/v2/key?x=1&y=/z",
    });
    expect(splitUrl("https://api.opensea.io/api/v2/events")).toEqual({
      origin: "https://api.opensea.io",
      path: "/api/v2/events",
    });
    expect(splitUrl("https://example.com/")).toEqual({ origin: "https://example.com", path: "/" });
    // A double slash in the path stays in the path.
    expect(splitUrl("http://h//a//b")).toEqual({ origin: "http://h", path: "//a//b" });
  });

  it("gives `/` as the path of a URL that has none", () => {
    expect(splitUrl("http://localhost:3000")).toEqual({ origin: "http://localhost:3000", path: "/" });
  });

  it("agrees with the URL parser on any http(s) URL with a path (property)", () => {
    const segment = fc.stringMatching(/^[a-z0-9_~-]{0,8}$/);
    fc.assert(
      fc.property(
        fc.constantFrom("http", "https"),
        fc.domain(),
        fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined }),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        fc.option(fc.stringMatching(/^[a-z0-9=&/]{1,12}$/), { nil: undefined }),
        (scheme, host, port, segments, query) => {
          const origin = `${scheme}://${host}${port === undefined ? "" : `:${port}`}`;
          const path = `/${segments.join("/")}${query === undefined ? "" : `?${query}`}`;
          const split = splitUrl(origin + path);
          expect(split).toEqual({ origin, path });
          const parsed = new URL(origin + path);
          expect(split.path).toBe(parsed.pathname + parsed.search);
        },
      ),
      { numRuns: RUNS, seed: 7 },
    );
  });
});

describe("the engines' errors", () => {
  it("AttemptTimeout: upstream_timeout (retryable), with the status and the bytes received by then", () => {
    const before = new AttemptTimeout();
    expect(before).toBeInstanceOf(ChainmailError);
    expect(before.name).toBe("AttemptTimeout");
    expect([before.code, before.retryable, before.status, before.received]).toEqual(["upstream_timeout", true, 0, 0]);
    expect(before.details).toMatchObject({ status: 0, received_bytes: 0 });
    const midway = new AttemptTimeout(200, 1_234);
    expect(midway.details).toMatchObject({ status: 200, received_bytes: 1_234 });
  });

  it("AnswerTooLarge: upstream_bad_response naming the limit, and the announced length only when there was one", () => {
    const announced = new AnswerTooLarge(1_000, 200, 5_000);
    expect(announced).toBeInstanceOf(ChainmailError);
    expect(announced.name).toBe("AnswerTooLarge");
    expect([announced.code, announced.retryable]).toEqual(["upstream_bad_response", false]);
    expect(announced.message).toBe("the answer is larger than 1000 bytes (5000)");
    expect(announced.details).toMatchObject({ status: 200, max_bytes: 1_000, bytes: 5_000 });
    const streamed = new AnswerTooLarge(1_000, 200, undefined);
    expect(streamed.message).toBe("the answer is larger than 1000 bytes");
    expect(streamed.details).not.toHaveProperty("bytes");
    expect([streamed.limit, streamed.status, streamed.bytes]).toEqual([1_000, 200, undefined]);
  });

  it("CutOffAnswer: upstream_unreachable (retryable) in the socket's words, the socket's error as its cause", () => {
    const socket = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    const cut = new CutOffAnswer(socket, 200);
    expect(cut).toBeInstanceOf(ChainmailError);
    expect(cut.name).toBe("CutOffAnswer");
    expect([cut.code, cut.retryable, cut.message]).toEqual(["upstream_unreachable", true, "read ECONNRESET"]);
    expect(cut.cause).toBe(socket);
    expect(cut.details).toMatchObject({ status: 200, truncated: true });
  });
});
