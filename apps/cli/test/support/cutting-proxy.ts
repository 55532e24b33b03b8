import { createServer, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

interface ProxiedRequest {
  method: string;
  path: string;
  lastEventId: string | undefined;
}

export interface CuttingProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Whether the cut happened. */
  cut(): boolean;
  close(): Promise<void>;
}

/**
 * A reverse proxy in front of the service that drops the connection of the first event stream it passes, like a
 * flaky network: after `events` complete events and a few bytes of the next one. Every other request passes.
 */
export async function startCuttingProxy(target: string, events: number): Promise<CuttingProxy> {
  const requests: ProxiedRequest[] = [];
  let didCut = false;
  const upstream = new URL(target);
  const server = createServer((incoming, outgoing) => {
    requests.push({
      method: incoming.method ?? "GET",
      path: incoming.url ?? "/",
      lastEventId: header(incoming.headers, "last-event-id"),
    });
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        // The head goes out at once: the client must have its answer before the stream breaks.
        outgoing.flushHeaders();
        const cutting = !didCut && (answer.headers["content-type"] ?? "").startsWith("text/event-stream");
        if (!cutting) {
          answer.pipe(outgoing);
          return;
        }
        didCut = true;
        let text = "";
        answer.setEncoding("utf8").on("data", (chunk: string) => {
          text += chunk;
          const boundary = [...text.matchAll(/\n\n/g)][events - 1]?.index;
          if (boundary === undefined) {
            outgoing.write(chunk);
            return;
          }
          // The complete events, and half of the next one: the client must drop the half.
          const sent = text.length - chunk.length;
          answer.destroy();
          // Broken once what was sent is on its way, never before: a cut that lost the head would be no resume.
          outgoing.write(text.slice(sent, Math.min(text.length, boundary + 2 + 8)), () =>
            outgoing.socket?.destroy(),
          );
        });
      },
    );
    forwarded.on("error", () => outgoing.socket?.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    cut: () => didCut,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
