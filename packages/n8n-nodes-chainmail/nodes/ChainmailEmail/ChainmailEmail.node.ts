import {
  type IExecuteFunctions,
  type INodeExecutionData,
  type INodeType,
  type INodeTypeDescription,
  NodeConnectionTypes,
} from "n8n-workflow";
import {
  configFor,
  type ErrorPayload,
  emailSend,
  errorItem,
  item,
  nodeError,
  parseJson,
  type RunContext,
  runNodeWith,
  serviceSuppressions,
} from "../../shared/chainmail";

type Output = { "messages sent"?: { Messages: unknown[] }; response?: unknown; error?: ErrorPayload };

export class ChainmailEmail implements INodeType {
  description: INodeTypeDescription = {
    displayName: "Chainmail Email",
    name: "chainmailEmail",
    icon: { light: "file:chainmail.svg", dark: "file:chainmail.dark.svg" },
    group: ["output"],
    version: 1,
    subtitle: "Send",
    description: "Sends a batch of emails through Mailjet's Send API v3.1, one result per message, never twice",
    defaults: { name: "Chainmail Email" },
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    usableAsTool: true,
    credentials: [
      { name: "chainmailMailjetApi", required: true },
      { name: "chainmailServiceApi", required: true, displayOptions: { show: { suppressionList: ["service"] } } },
    ],
    properties: [
      {
        displayName: "Resource",
        name: "resource",
        type: "options",
        noDataExpression: true,
        options: [{ name: "Email", value: "email" }],
        default: "email",
      },
      {
        displayName: "Operation",
        name: "operation",
        type: "options",
        noDataExpression: true,
        displayOptions: { show: { resource: ["email"] } },
        options: [
          {
            name: "Send",
            value: "send",
            action: "Send a batch of emails",
            description: "Send messages in Mailjet's Send API v3.1 format and return one result per message",
          },
        ],
        default: "send",
      },
      {
        displayName: "Messages From",
        name: "messagesFrom",
        type: "options",
        options: [
          {
            name: "Input Items",
            value: "items",
            description:
              "Each input item is one message (From, To, Subject, TextPart, HTMLPart, …); all go in one batch",
          },
          {
            name: "JSON",
            value: "json",
            description: "A request with its Messages array, once per input item",
          },
        ],
        default: "items",
      },
      {
        displayName: "Request",
        name: "request",
        type: "json",
        default: '{\n  "Messages": []\n}',
        description: 'The Send API v3.1 request: {"Messages": [...]} (an array of messages also works)',
        displayOptions: { show: { messagesFrom: ["json"] } },
      },
      {
        displayName: "Suppression List",
        name: "suppressionList",
        type: "options",
        noDataExpression: true,
        options: [
          {
            name: "Chainmail Service",
            value: "service",
            description:
              "Recipients on the list of a chainmail service (bounced, blocked, spam, unsubscribed) are not sent to: each is answered with the error suppressed, its reason and since when",
          },
          { name: "None", value: "none", description: "Send to every recipient" },
        ],
        default: "none",
        description: "Where recipients that must not be mailed any more are looked up before each batch",
      },
      {
        displayName: "Options",
        name: "options",
        type: "collection",
        placeholder: "Add option",
        default: {},
        options: [
          {
            displayName: "Sandbox Mode",
            name: "sandboxMode",
            type: "boolean",
            default: false,
            description: "Whether Mailjet only checks the messages and sends none",
          },
          {
            displayName: "Raw Output",
            name: "rawOutput",
            type: "boolean",
            default: false,
            description:
              "Whether to output one item per batch holding the node's output (messages sent and the upstream's raw response) instead of one item per message",
          },
        ],
      },
    ],
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    const items = this.getInputData();
    const ctx: RunContext = { config: await configFor(this, "mail", "mailjet") };
    if (this.getNodeParameter("suppressionList", 0, "none") === "service") {
      // The service's list, asked through its own credential; a lookup that fails sends nothing (error output).
      ctx.suppressions = serviceSuppressions(await configFor(this, "source", "service"));
    }
    const messagesFrom = this.getNodeParameter("messagesFrom", 0) as string;
    const out: INodeExecutionData[] = [];

    const send = (request: Record<string, unknown>, pairs: number[], at: number) =>
      sendBatch(this, ctx, out, request, pairs, at);

    if (messagesFrom === "items") {
      if (items.length === 0) return [out];
      await send(
        { Messages: items.map((entry) => entry.json) },
        items.map((_, i) => i),
        0,
      );
      return [out];
    }
    for (let i = 0; i < items.length; i++) {
      const read = requestOf(this.getNodeParameter("request", i));
      if ("error" in read) {
        if (!this.continueOnFail()) throw nodeError(this, read.error, i);
        out.push(errorItem(read.error, i));
        continue;
      }
      const { body } = read;
      const count = Array.isArray(body?.Messages) ? body.Messages.length : 0;
      await send(
        { ...body },
        Array.from({ length: count }, () => i),
        i,
      );
    }
    return [out];
  }
}

/** The Request parameter as a request body (an array: its Messages), or the error of one that is not JSON. */
function requestOf(given: unknown): { body: Record<string, unknown> } | { error: ErrorPayload } {
  let request: unknown = given;
  if (typeof given === "string") {
    try {
      request = parseJson(given);
    } catch {
      return {
        error: {
          error: "The Request parameter is not valid JSON.",
          details: { code: "invalid_input", field: "request" },
        },
      };
    }
  }
  return { body: Array.isArray(request) ? { Messages: request } : (request as Record<string, unknown>) };
}

/** One batch: its results paired with the items they came from. */
async function sendBatch(
  fns: IExecuteFunctions,
  ctx: RunContext,
  out: INodeExecutionData[],
  request: Record<string, unknown>,
  pairs: number[],
  at: number,
): Promise<void> {
  const options = fns.getNodeParameter("options", at, {}) as { sandboxMode?: boolean; rawOutput?: boolean };
  if (options.sandboxMode) request.SandboxMode = true;
  const output = (await runNodeWith(emailSend, { request }, ctx)) as Output;
  const results = output["messages sent"]?.Messages;
  if (results) {
    // Every message has its result (a failed one says whether it was surely not sent): nothing is thrown, so
    // that no retry of this node sends a message twice. A failure of the batch shows on each failed message.
    if (options.rawOutput) out.push(item({ "messages sent": output["messages sent"], response: output.response }, at));
    else for (const [m, result] of results.entries()) out.push(item(result, pairs[m] ?? at));
    return;
  }
  const error = output.error ?? {
    error: "chainmail gave neither results nor an error",
    details: { code: "internal" },
  };
  if (!fns.continueOnFail()) throw nodeError(fns, error, at);
  for (const pair of new Set(pairs.length ? pairs : [at])) out.push(errorItem(error, pair));
}
