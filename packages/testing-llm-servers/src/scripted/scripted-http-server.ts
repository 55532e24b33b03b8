/**
 * The HTTP side every scripted LLM server shares: listening on a (random) loopback port, recording each request
 * before anything can fail, a 500 instead of a hang when a handler throws, and a close that does not wait for
 * open (streaming or keep-alive) connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { ScriptedRequestRecord } from "./recorded-request.js";
import { ScriptedExchange } from "./scripted-exchange.js";

export interface ScriptedHttpServerOptions<R extends ScriptedRequestRecord> {
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port. Default 0 (a random free port). */
  port?: number;
  /** Answers one recorded request. */
  handle(exchange: ScriptedExchange<R>): Promise<void>;
  /** The JSON body of the 500 sent when `handle` throws before answering, in the API's error shape. */
  internalErrorBody(message: string): unknown;
}

export interface ScriptedHttpServer<R extends ScriptedRequestRecord> {
  /** `http://127.0.0.1:PORT`. */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: R[];
  /** Stops listening and destroys open connections. */
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Starts the server; resolves once it listens. */
export async function startScriptedHttpServer<R extends ScriptedRequestRecord>(
  options: ScriptedHttpServerOptions<R>,
): Promise<ScriptedHttpServer<R>> {
  const requests: R[] = [];
  const sockets = new Set<Socket>();
  const connectionNumbers = new WeakMap<Socket, number>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const base: ScriptedRequestRecord = {
      index: requests.length,
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers: req.headers,
      rawBody,
      body: undefined,
      receivedAt: Date.now(),
      connection: connectionNumbers.get(req.socket) ?? 0,
      stream: false,
      consumedStep: false,
      events: [],
    };
    // A provider's record only adds optional fields (validation results), which its handler fills in.
    const record = base as R;
    requests.push(record);
    if (rawBody.length > 0) {
      try {
        record.body = JSON.parse(rawBody);
      } catch {
        // recorded as rawBody only
      }
    }
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    await options.handle(new ScriptedExchange(req, res, record, controller.signal));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json", "x-should-retry": "false" });
        res.end(
          JSON.stringify(
            options.internalErrorBody(
              `testing-llm-servers: internal error: ${error instanceof Error ? error.stack : String(error)}`,
            ),
          ),
        );
      } else {
        res.destroy();
      }
    });
  });
  let accepted = 0;
  server.on("connection", (socket) => {
    sockets.add(socket);
    connectionNumbers.set(socket, ++accepted);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    origin: `http://${host}:${address.port}`,
    port: address.port,
    requests,
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      });
    },
  };
}
