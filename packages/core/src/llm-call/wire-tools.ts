import type { ToolDefinition } from "../records/tool-definition.js";

/** One tool in wire form; its place in the catalog lets an adapter mark the last one (a prompt-cache breakpoint). */
type WireToolConverter<Wire> = (
  tool: ToolDefinition,
  index: number,
  tools: readonly ToolDefinition[],
) => Wire;

/**
 * A provider adapter's wire form of tool catalogs, converted once per catalog array. A mode's catalog is one
 * array on every call (`AgentCatalog.toolsFor`), so its wire tools are one array too: converted once, and the
 * same in every call's trace, where a store can keep the digest it computed for it.
 */
export class WireTools<Wire> {
  readonly #converted = new WeakMap<readonly ToolDefinition[], Wire[]>();
  readonly #convert: WireToolConverter<Wire>;

  constructor(convert: WireToolConverter<Wire>) {
    this.#convert = convert;
  }

  /** `tools` in wire form: the array given for these `tools` before, if any. */
  of(tools: readonly ToolDefinition[]): Wire[] {
    let wire = this.#converted.get(tools);
    if (wire === undefined) {
      wire = tools.map(this.#convert);
      this.#converted.set(tools, wire);
    }
    return wire;
  }
}
