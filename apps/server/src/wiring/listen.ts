import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { ServerEnv } from "../config/server-env.js";

export interface Listening {
  /** e.g. `http://127.0.0.1:8787` */
  url: string;
  port: number;
  /**
   * Stops taking requests and resolves once those running have been answered; connections still open when
   * APTIX_SHUTDOWN_TIMEOUT_MS is all but spent are closed, leaving the rest to close what the server holds.
   */
  close(): Promise<void>;
}

/** Serves `fetch` on HOST and PORT (0 picks a free port), once it listens; rejects with the listen error. */
export async function listen(
  fetch: Parameters<typeof serve>[0]["fetch"],
  env: Pick<ServerEnv, "HOST" | "PORT" | "APTIX_SHUTDOWN_TIMEOUT_MS">,
): Promise<Listening> {
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = serve({ fetch, port: env.PORT, hostname: env.HOST }, () => {
      listening.off("error", reject);
      resolve(listening as Server);
    });
    // A port taken meanwhile: start-up fails with the listen error, not an unhandled 'error' event.
    listening.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        const force = setTimeout(
          () => server.closeAllConnections(),
          requestsMs(env.APTIX_SHUTDOWN_TIMEOUT_MS),
        );
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/**
 * Of the shutdown's time, what open requests may take: all but a quarter (at most 5 s), which closing MCP servers,
 * the database and the trace exporter get.
 */
function requestsMs(shutdownMs: number): number {
  return shutdownMs - Math.min(5_000, Math.floor(shutdownMs / 4));
}
