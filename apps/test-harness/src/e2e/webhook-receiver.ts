import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** One request the receiver got: its Standard Webhooks headers, the raw body, and whether its signature held. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: IncomingHttpHeaders;
  /** The status it was answered with. */
  answered: number;
}

export interface WebhookReceiver {
  /** Where the webhook posts. */
  url: string;
  /** Its signing secret, `whsec_<base64>`. */
  secret: string;
  /** Every request answered so far, in the order they were answered. */
  received: ReceivedWebhook[];
  /** Requests come and not answered yet. */
  answering: number;
  /** Decides each answer's status (default 200 to all), at once or later (a slow receiver). */
  answer: (request: Omit<ReceivedWebhook, "answered">) => number | Promise<number>;
  close(): Promise<void>;
}

/** Whether a delivery is signed with `secret`: the check of docs/operations.md. */
export type WebhookVerification = (secret: string, headers: IncomingHttpHeaders, body: string) => boolean;

/**
 * The verification snippet of docs/operations.md (Node, `node:crypto` only), as a reader would paste it, loaded as
 * a module: the receivers' deliveries are checked with what the docs tell people to run.
 */
export async function documentedWebhookVerification(): Promise<WebhookVerification> {
  const docs = await readFile(new URL("../../../../docs/operations.md", import.meta.url), "utf8");
  const snippet = /```js\n(import \{ createHmac[\s\S]*?)```/.exec(docs)?.[1];
  if (snippet === undefined) throw new Error("docs/operations.md shows no verification snippet");
  const file = join(await mkdtemp(join(tmpdir(), "aptix-e2e-verify-")), "verify.mjs");
  await writeFile(file, `${snippet}\nexport { verifyWebhook };\n`);
  const loaded = (await import(pathToFileURL(file).href)) as { verifyWebhook: WebhookVerification };
  return loaded.verifyWebhook;
}

/** A webhook receiver on loopback, with a fresh secret, recording what it gets and answering as told. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const receiver: WebhookReceiver = {
    url: "",
    secret,
    received: [],
    answering: 0,
    answer: () => 200,
    close: async () => {},
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const got = {
        id: String(request.headers["webhook-id"]),
        timestamp: String(request.headers["webhook-timestamp"]),
        signature: String(request.headers["webhook-signature"]),
        body,
        headers: request.headers,
      };
      receiver.answering += 1;
      const answered = await receiver.answer(got);
      receiver.answering -= 1;
      receiver.received.push({ ...got, answered });
      response.statusCode = answered;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
