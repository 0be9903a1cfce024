/**
 * chainmail-config: credentials and origins for the chainmail nodes that name it. Its secrets live in Node-RED's
 * credential store and never reach a message, a log or a status.
 */

import type { NodeAPI } from "../node-red.js";
import {
  type ChainmailConfigNode,
  type ConfigDef,
  CREDENTIALS,
  type Credentials,
  configSettings,
} from "../shared/index.js";

export = function register(RED: NodeAPI) {
  function ChainmailConfig(this: ChainmailConfigNode, def: ConfigDef) {
    RED.nodes.createNode(this, def);
    const credentials = (this.credentials ?? {}) as Credentials;
    this.settings = () => configSettings(def, credentials);
  }
  RED.nodes.registerType("chainmail-config", ChainmailConfig, { credentials: CREDENTIALS });
};
