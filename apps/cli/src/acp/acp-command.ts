import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import { cliVersion } from "../cli-version.js";
import { type CliContext, EXIT } from "../commands/cli-context.js";
import { visible } from "../terminal/visible.js";
import { AcpAgent } from "./acp-agent.js";

/**
 * `aptix acp`: serves the Agent Client Protocol on stdin/stdout (newline-delimited JSON-RPC) until the editor
 * closes stdin. Nothing but protocol messages goes to stdout; what the agent has to say otherwise goes to stderr.
 */
export async function acpCommand(context: CliContext): Promise<number> {
  const { streams, client, options } = context;
  const log = (line: string) => streams.stderr.write(`aptix acp: ${visible(line)}\n`);
  const agent = new AcpAgent({
    client,
    url: options.url,
    allowIgnored: options.allowIgnored,
    configFile: options.configFile,
    version: cliVersion(),
    log,
  });
  const stream = ndJsonStream(
    Writable.toWeb(streams.stdout as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(streams.stdin as Readable) as ReadableStream<Uint8Array>,
  );
  const connection = agent.app().connect(stream);
  await connection.closed;
  return EXIT.done;
}
