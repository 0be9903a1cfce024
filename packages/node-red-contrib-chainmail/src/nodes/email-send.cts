/**
 * chainmail-email-send: a batch of email through Mailjet, per input message, never a message twice.
 * `msg.payload` in is its input object, keyed by input port; each output port that fires sends one message whose
 * `msg.payload` is that port's value, integers beyond 2^53 as exact decimal strings.
 */
import type { NodeAPI } from "../node-red.js";
import { emailSend, registerRunNode } from "../shared/index.js";

export = (RED: NodeAPI) => registerRunNode(RED, "chainmail-email-send", emailSend);
