/**
 * `POST /nodes/<node-id>`: every node of the registry served generically through `runNode` (validation lives in
 * the node), behind the bearer check and within CHAINMAIL_REQUEST_TIMEOUT_MS; `POST /nodes/<unknown>` answers
 * which nodes exist.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../core/config.js";
import { ChainmailError, httpStatusOf } from "../core/errors.js";
import { type AnyNode, type GenericOutput, runNode } from "../core/node.js";
import { createAdmission } from "./admission.js";
import { bearerChecker } from "./auth.js";
import { bigintForm, inForm } from "./integers.js";
import type { ServiceMetrics } from "./metrics.js";
import { stringifyOutput } from "./output-body.js";
import { sendError, sendJson } from "./replies.js";
import type { ServerSettings } from "./settings.js";
import { shareUpstreamReads, wantsFresh } from "./upstream-sharing.js";

/** Time the node gets to report a cancelled run itself before the service answers 504 on its own. */
const ABORT_GRACE_MS = 1_000;

/** 200 when only the success port fired; otherwise the status of the error code, even beside partial results. */
export function statusOf(node: AnyNode, output: GenericOutput): number {
  if (output.error) return httpStatusOf(output.error.details?.code);
  return node.successPort in output ? 200 : 500;
}

interface NodeRoutes {
  config: Config;
  settings: ServerSettings;
  metrics: ServiceMetrics;
  nodes: Readonly<Record<string, AnyNode>>;
}

export function registerNodeRoutes(app: FastifyInstance, { config, settings, metrics, nodes }: NodeRoutes): void {
  const checkBearer = bearerChecker(settings.tokens);
  const sharing = shareUpstreamReads(config, settings.cache);
  metrics.watchSharedReads(sharing.stats);
  // Runs before the body is read: an unauthenticated caller cannot make the service parse a large body.
  // Callback style: an async hook costs a promise on every request.
  const requireToken = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const refusal = checkBearer(request.headers.authorization);
    if (refusal) sendError(reply, refusal);
    else done();
  };

  const runOne = async (node: AnyNode, request: FastifyRequest, reply: FastifyReply) => {
    const asked = bigintForm(request.query);
    if ("error" in asked) return sendJson(reply, 400, { error: asked.error });
    const output = await runWithin(settings.requestTimeoutMs, node, (signal) =>
      runNode(node, request.body, {
        config: wantsFresh(request.headers["cache-control"]) ? sharing.fresh : sharing.config,
        logger: request.log,
        signal,
        onUpstreamAttempt: metrics.observeAttempt,
      }),
    );
    // A port that came unchanged from an upstream's JSON is written as that text (output-body.ts); the string form
    // of integers beyond 2^53 is a copy of the output, which is serialised whole.
    const body = inForm(output, asked.form) as GenericOutput;
    return reply.code(statusOf(node, output)).type("application/json; charset=utf-8").send(stringifyOutput(body));
  };

  // Once the body is in: a client trickling its body takes no place from those whose request is whole (it is cut by
  // CHAINMAIL_BODY_TIMEOUT_MS instead), and an unauthenticated caller never gets that far.
  const admission = createAdmission(settings.admission);
  metrics.watchAdmission(admission.state);
  app.addHook("onClose", (_app, done) => {
    admission.stop();
    done();
  });
  for (const node of Object.values(nodes)) {
    const route = {
      config: { node: node.id },
      onRequest: [requireToken, admission.loopHook],
      preHandler: admission.hook,
    };
    app.post(`/nodes/${node.id}`, route, (request, reply) => runOne(node, request, reply));
  }
  app.post("/nodes/:id", { onRequest: [requireToken, unknownNode(Object.keys(nodes))] }, () => {
    throw new Error("unreachable: unknownNode answers first");
  });
}

/** Answered before the body is read, so the caller learns which nodes exist whatever it sent. */
function unknownNode(known: string[]) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const { id } = request.params as { id: string };
    const unknown = new ChainmailError("UNKNOWN_NODE", `Unknown node "${id}". Nodes: ${known.join(", ")}.`, {
      details: { nodes: known },
    });
    return sendError(reply, unknown);
  };
}

/**
 * Runs a node, cancelling it at `timeoutMs`; a run that reports its cancellation, or does not finish within a grace
 * time after it, ends as `request_timeout` (beside whatever else it output).
 */
async function runWithin(
  timeoutMs: number,
  node: AnyNode,
  run: (signal: AbortSignal) => Promise<unknown>,
): Promise<GenericOutput> {
  const controller = new AbortController();
  let hardStop: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  // One timer per request: the grace period's starts only when the run is cancelled.
  const deadline = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      hardStop = setTimeout(() => resolve(undefined), ABORT_GRACE_MS);
    }, timeoutMs);
  });
  try {
    const output = await Promise.race([run(controller.signal) as Promise<GenericOutput>, deadline]);
    if (output && !(controller.signal.aborted && output.error?.details.code === "aborted")) return output;
    const timeout = new ChainmailError("REQUEST_TIMEOUT", `${node.id} did not finish within ${timeoutMs} ms.`, {
      hint: "Try again later, ask for a smaller page or batch, or ask the operator to raise CHAINMAIL_REQUEST_TIMEOUT_MS.",
      details: { timeout_ms: timeoutMs },
    });
    return { ...(output ?? {}), error: timeout.toPayload() };
  } finally {
    clearTimeout(timer);
    clearTimeout(hardStop);
  }
}
