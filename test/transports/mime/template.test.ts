/**
 * src/transports/mime/template.ts on its own: the part of Mailjet's template language the MIME transports honour,
 * `{{var:name}}` and `{{var:name:"default"}}`; values escaped in HTML, defaults kept as written, the rest left alone.
 */
import { describe, expect, it } from "vitest";
import { substituteVariables } from "../../../src/transports/mime/template.js";

describe("substituteVariables", () => {
  it('substitutes {{var:name}} and {{var:name:"default"}}, with spaces, escaped quotes and non-strings', () => {
    const vars = { who: "Ann", n: 3, list: [1, 2], on: false, nothing: null };
    const { text, missing } = substituteVariables(
      '{{var:who}}|{{ var:n }}|{{var:list}}|{{var:on}}|{{var:gone:"say \\"hi\\""}}|{{var:nothing:"none"}}|{{var:x:""}}',
      vars,
      { html: false },
    );
    expect(text).toBe('Ann|3|[1,2]|false|say "hi"|none|');
    expect(missing).toEqual([]);
  });

  it("reports variables with neither value nor default, and leaves other tags alone", () => {
    const { text, missing } = substituteVariables("{{var:a}} {{data:b}} {% if x %}", {}, { html: false });
    expect(missing).toEqual(["a"]);
    expect(text).toBe("{{var:a}} {{data:b}} {% if x %}");
  });

  it("escapes values in HTML but not defaults written by the template author", () => {
    const { text } = substituteVariables('{{var:v}} {{var:d:"<b>bold</b>"}}', { v: `<script>"&'` }, { html: true });
    expect(text).toBe("&lt;script&gt;&quot;&amp;&#39; <b>bold</b>");
  });

  it("reads only the variables' own keys: a name on Object.prototype is missing, not a function", () => {
    const { text, missing } = substituteVariables('{{var:constructor}}|{{var:toString:"d"}}', {}, { html: false });
    expect(text).toBe("{{var:constructor}}|d");
    expect(missing).toEqual(["constructor"]);
  });

  it("takes names with dots, dashes and underscores, and replaces every occurrence", () => {
    const vars = { "sale.price": "1.5", "token-id": 42, buyer_name: "Bo" };
    const { text } = substituteVariables(
      "{{var:sale.price}} {{var:token-id}} {{var:buyer_name}} {{var:token-id}}",
      vars,
      { html: false },
    );
    expect(text).toBe("1.5 42 Bo 42");
  });

  it("writes `absent` for a variable with neither value nor default, when given", () => {
    const { text, missing } = substituteVariables(
      "[{{var:a}}] [{{ var:b }}]",
      { b: undefined },
      {
        html: false,
        absent: "",
      },
    );
    expect(text).toBe("[] []");
    expect(missing).toEqual(["a", "b"]);
  });

  it("escapes every value in HTML, objects written as JSON included", () => {
    const { text } = substituteVariables("{{var:o}} {{var:n}}", { o: { a: "<x>" }, n: 2n ** 70n }, { html: true });
    expect(text).toBe("{&quot;a&quot;:&quot;&lt;x&gt;&quot;} 1180591620717411303424");
  });

  it("leaves malformed tags as written", () => {
    const text = '{{var:}} {{var:a b}} {{ var:c:unquoted }} {var:d} {{var:e:"open}}';
    expect(substituteVariables(text, { a: 1, c: 1, d: 1, e: 1 }, { html: false })).toEqual({ text, missing: [] });
  });
});
