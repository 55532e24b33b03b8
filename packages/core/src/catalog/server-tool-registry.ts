import type { ServerTool } from "../ports/server-tool.js";

/** The server's tool executors by name. A name it does not hold is a client tool (AGN-027 D). */
export class ServerToolRegistry {
  readonly #tools = new Map<string, ServerTool>();

  constructor(tools: Iterable<ServerTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  register<A>(tool: ServerTool<A>): void {
    const name = tool.definition.name;
    if (this.#tools.has(name)) throw new Error(`server tool ${JSON.stringify(name)} is registered twice`);
    this.#tools.set(name, tool as ServerTool);
  }

  get(name: string): ServerTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get names(): string[] {
    return [...this.#tools.keys()];
  }
}
