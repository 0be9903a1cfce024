/**
 * chainmail-mail-events: polls the chainmail service's event feed every `interval` seconds and sends one message
 * per event of the kinds chosen (oldest first, `topic` its kind); its cursor is kept like the activity node's, so a
 * restart goes on from where it was: each event once.
 */
import type { NodeAPI, NodeDef, RuntimeNode } from "../node-red.js";
import {
  configOf,
  cursorFile,
  errorStatus,
  everyInterval,
  listOf,
  MAX_EVENTS_PER_POLL,
  type MailEventCursor,
  MailjetEventKinds,
  polledStatus,
  pollInterval,
  pollMailEvents,
  scrub,
  settingsOf,
  toErrorPayload,
  withExactStrings,
} from "../shared/index.js";

interface EventsDef extends NodeDef {
  config?: string;
  /** Comma-separated Mailjet kinds; empty: every kind. */
  kinds?: string;
  interval?: string | number;
}

export = function register(RED: NodeAPI) {
  RED.nodes.registerType("chainmail-mail-events", function ChainmailMailEvents(this: RuntimeNode, def: EventsDef) {
    RED.nodes.createNode(this, def);
    startMailEvents(RED, this, def);
  });
};

function startMailEvents(RED: NodeAPI, node: RuntimeNode, def: EventsDef) {
  const kinds = listOf(def.kinds);
  const unknown = (kinds ?? []).filter((k) => !(MailjetEventKinds as readonly string[]).includes(k));
  if (unknown.length) {
    node.status(errorStatus("invalid_input"));
    node.warn(
      RED._("mail-events.errors.kinds", { kinds: JSON.stringify(def.kinds), known: MailjetEventKinds.join(", ") }),
    );
    return;
  }
  const cursor = cursorFile<MailEventCursor>(RED, "chainmail-mail-events", node);
  const poll = async () => {
    const { env, secrets } = settingsOf(RED, def.config);
    let full = false;
    try {
      const polled = await pollMailEvents(configOf(env), cursor.read(), { kinds });
      for (const event of polled.events) node.send({ payload: withExactStrings(event), topic: event.event });
      cursor.write(polled.cursor);
      // A full poll leaves events behind: the next one goes at once.
      full = polled.events.length >= MAX_EVENTS_PER_POLL;
      node.status(polledStatus(RED, polled.events.length));
    } catch (error) {
      const payload = toErrorPayload(error);
      node.status(errorStatus(payload.details.code));
      node.warn(scrub(payload.error, secrets));
    }
    return full;
  };
  everyInterval(node, pollInterval(def.interval), poll, cursor.remove);
}
