/**
 * How an address is keyed on the suppression list: trimmed and lower-cased, so `Ann@X.io ` and `ann@x.io` are one
 * entry. Kept apart from store.ts so the send path (send-guard, the service's client) asks by the same key without
 * loading the database module.
 */
export const suppressionKey = (address: string): string => address.trim().toLowerCase();
