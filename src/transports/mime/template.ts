/**
 * Mailjet's template variables, the part of its template language a plain MIME transport can honour:
 * `{{var:name}}` and `{{var:name:"default"}}` (spaces inside the braces allowed). Anything else in `{{ }}` or
 * `{% %}` is left as written.
 */

const VARIABLE = /\{\{\s*var:([A-Za-z0-9_.-]+)\s*(?::\s*"((?:[^"\\]|\\.)*)"\s*)?\}\}/g;

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}

export interface Substitution {
  text: string;
  /** Variables used without a value in `Variables` and without a default. */
  missing: string[];
}

/**
 * Replaces every `{{var:…}}` in `text`. In HTML the values are escaped, so a variable cannot inject markup
 * (a default is written by the template author and is kept as written).
 */
export function substituteVariables(
  text: string,
  variables: Record<string, unknown>,
  options: {
    html: boolean;
    /** What a variable with neither a value nor a default becomes; default: it is left as written. */
    absent?: string;
  },
): Substitution {
  const missing: string[] = [];
  const out = text.replace(VARIABLE, (whole, name: string, fallback: string | undefined) => {
    if (Object.hasOwn(variables, name) && variables[name] !== null && variables[name] !== undefined) {
      const value = asText(variables[name]);
      return options.html ? value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!) : value;
    }
    if (fallback !== undefined) return fallback.replace(/\\(.)/g, "$1");
    missing.push(name);
    return options.absent ?? whole;
  });
  return { text: out, missing };
}
