/**
 * chainmail as the n8n nodes use it: its workflow kit (bundled into dist/shared/chainmail.js at build) and what
 * joins it to n8n (host.ts).
 */
export * from "../../../src/workflow/index.js";
export * from "./host.js";
