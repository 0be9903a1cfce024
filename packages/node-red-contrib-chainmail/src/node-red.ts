/** The few parts of Node-RED's runtime API these nodes use (Node-RED ships no types of its own). */
export interface NodeDef {
  id: string;
  type: string;
  name?: string;
}

export interface NodeMessage {
  payload?: unknown;
  topic?: string;
  _msgid?: string;
  [key: string]: unknown;
}

export interface NodeStatus {
  fill?: "red" | "green" | "yellow" | "blue" | "grey";
  shape?: "ring" | "dot";
  text?: string;
}

export interface RuntimeNode {
  id: string;
  credentials?: Record<string, unknown>;
  on(
    event: "input",
    listener: (msg: NodeMessage, send: (msgs: (NodeMessage | null)[]) => void, done: () => void) => void,
  ): void;
  on(event: "close", listener: (removed: boolean, done: () => void) => void): void;
  send(msg: NodeMessage | (NodeMessage | null)[]): void;
  status(status: NodeStatus): void;
  warn(message: string): void;
}

export interface NodeAPI {
  nodes: {
    createNode(node: RuntimeNode, def: NodeDef): void;
    registerType(
      type: string,
      build: (this: any, def: any) => void,
      options?: { credentials?: Record<string, { type: "text" | "password" }> },
    ): void;
    getNode(id: string): RuntimeNode | null;
  };
  util: { cloneMessage<T extends NodeMessage>(msg: T): T };
  /** A message of this node set's catalogue (locales/<lang>/<file>.json), with `__name__` substitutions. */
  _(messageId: string, substitutions?: Record<string, unknown>): string;
  settings: { userDir?: string };
}
