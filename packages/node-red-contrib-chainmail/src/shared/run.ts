/** The nodes that run once per input message: the three retrievers and email send. */
import {
  type AnyNode,
  emailSend,
  type RunContext,
  runNodeWith,
  scrub,
  serviceSuppressions,
  toErrorPayload,
  withExactStrings,
} from "../../../../src/workflow/index.js";
import type { NodeAPI, NodeDef, NodeMessage, RuntimeNode } from "../node-red.js";
import { configOf, type NodeSettings, settingsOf } from "./settings.js";
import { errorStatus, runningStatus, summary } from "./status.js";

/** A node's fields: its name, its config node, and email send's choice to look up suppressions. */
interface RunDef extends NodeDef {
  config?: string;
  suppressions?: boolean;
}

/** Registers `type`: one Node-RED output per output port of `definition`, in order. */
export function registerRunNode(RED: NodeAPI, type: string, definition: AnyNode): void {
  const ports = Object.keys(definition.outputs);
  function ChainmailNode(this: RuntimeNode, def: RunDef) {
    RED.nodes.createNode(this, def);
    this.on("input", async (msg: NodeMessage, send, done) => {
      const settings = settingsOf(RED, def.config);
      await runOnInput(RED, this, definition, ports, settings, def.suppressions === true, msg, send);
      done();
    });
  }
  RED.nodes.registerType(type, ChainmailNode);
}

/** One input message through a node: its output ports as messages, its status, a warning naming no secret. */
async function runOnInput(
  RED: NodeAPI,
  node: RuntimeNode,
  definition: AnyNode,
  ports: string[],
  settings: NodeSettings,
  useSuppressions: boolean,
  msg: NodeMessage,
  send: (messages: (NodeMessage | null)[]) => void,
): Promise<void> {
  node.status(runningStatus(RED));
  const { env, secrets } = settings;
  let output: Record<string, unknown>;
  try {
    const ctx: RunContext = { config: configOf(env) };
    // email-send: recipients on the chainmail service's suppression list are answered `suppressed`, not sent.
    if (definition === emailSend && useSuppressions) ctx.suppressions = serviceSuppressions(ctx.config);
    output = await runNodeWith(definition, msg.payload, ctx);
  } catch (error) {
    output = { error: toErrorPayload(error) };
  }
  const messages = ports.map((port, i) => {
    if (!Object.hasOwn(output, port)) return null;
    const value = withExactStrings(output[port]);
    return { ...(i === 0 ? msg : RED.util.cloneMessage(msg)), payload: value };
  });
  send(messages);
  const error = output.error as { error: string; details: { code: string } } | undefined;
  if (error) {
    node.status(errorStatus(error.details.code));
    // Logged as the node's warning: the message says what to fix; a secret never reaches it.
    node.warn(scrub(error.error, secrets));
  } else node.status({ fill: "green", shape: "dot", text: summary(RED, output) });
}
