// What every chainmail node's editor definition shares; scripts/build-packages.mjs writes it into each node's file.
/** The definition of a node whose catalogue key is `key`: `own`, with the shared colour, icon, fields and labels. */
// biome-ignore lint/correctness/noUnusedVariables: used by the node file it is written into
const chainmailNode = (key, own) => ({
  category: "chainmail",
  color: "#a6bbcf",
  icon: "chainmail.svg",
  inputs: 1,
  paletteLabel: function () {
    return this._(`${key}.paletteLabel`);
  },
  label: function () {
    return this.name || this._(`${key}.paletteLabel`);
  },
  ...own,
  defaults: {
    name: { value: "" },
    config: { value: "", type: "chainmail-config", required: false },
    ...own.defaults,
  },
});
/** Output labels of the ports named, in order, from the catalogue. */
// biome-ignore lint/correctness/noUnusedVariables: used by the node file it is written into
const portLabels = (ports) =>
  function (index) {
    return this._(`chainmail.ports.${ports[index]}`);
  };
