import {
  type INodeExecutionData,
  type INodeType,
  type INodeTypeDescription,
  type IPollFunctions,
  NodeConnectionTypes,
} from "n8n-workflow";
import {
  configFor,
  item,
  type MailEventCursor,
  MailjetEventKinds,
  nodeError,
  pollMailEvents,
  toErrorPayload,
} from "../../shared/chainmail";

/** Events a manual test run shows: the next few after the cursor, without moving it. */
const SAMPLE = 5;

/** What each Mailjet kind means, as the Events option lists it. */
const KIND_DESCRIPTIONS: Record<string, string> = {
  blocked: "Mailjet did not send it (a blocked recipient or content)",
  bounce: "The receiving server refused it (hard_bounce says for good)",
  click: "The recipient clicked a link",
  open: "The recipient opened it",
  sent: "The receiving server took it",
  spam: "The recipient marked it as spam",
  unsub: "The recipient unsubscribed",
};

export class ChainmailDeliveryTrigger implements INodeType {
  description: INodeTypeDescription = {
    displayName: "Chainmail Delivery Trigger",
    name: "chainmailDeliveryTrigger",
    icon: { light: "file:chainmail.svg", dark: "file:chainmail.dark.svg" },
    group: ["trigger"],
    version: 1,
    subtitle: '={{$parameter["events"].join(", ") || "all events"}}',
    description:
      "Starts the workflow on Mailjet delivery events (sent, open, click, bounce, blocked, spam, unsub) stored by a chainmail service, each once",
    defaults: { name: "Chainmail Delivery Trigger" },
    polling: true,
    inputs: [],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: "chainmailServiceApi", required: true }],
    properties: [
      {
        displayName: "Events",
        name: "events",
        type: "multiOptions",
        options: [...MailjetEventKinds]
          .sort()
          .map((kind) => ({ name: kind, value: kind, description: KIND_DESCRIPTIONS[kind] })),
        default: [],
        description: "Kinds of event to trigger on (none chosen: every kind)",
      },
    ],
  };

  async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
    const kinds = this.getNodeParameter("events", []) as string[];
    try {
      const config = await configFor(this, "source", "service");
      const state = this.getWorkflowStaticData("node") as { cursor?: MailEventCursor };
      if (this.getMode() === "manual") {
        const { events } = await pollMailEvents(config, state.cursor, { kinds, limit: SAMPLE });
        return events.length ? [events.map((event) => item(event))] : null;
      }
      const { events, cursor } = await pollMailEvents(config, state.cursor, { kinds });
      // Kept only once the events are handed to n8n: a failed poll reads the same events again next time.
      state.cursor = cursor;
      return events.length ? [events.map((event) => item(event))] : null;
    } catch (error) {
      throw nodeError(this, toErrorPayload(error));
    }
  }
}
