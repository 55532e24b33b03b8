import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver got: its Standard Webhooks headers, the raw body, and whether its signature held. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  headers: IncomingHttpHeaders;
  /** The signature verified under the receiver's secret, as docs/operations.md shows. */
  verified: boolean;
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

/**
 * The verification of docs/operations.md, with `node:crypto` only: the HMAC-SHA256 of `<id>.<timestamp>.<body>`
 * under the secret's key, compared in constant time with each `v1,` signature of the header.
 */
function verifyWebhook(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const signed = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`;
  const expected = createHmac("sha256", key).update(signed).digest();
  return String(headers["webhook-signature"] ?? "")
    .split(" ")
    .filter((signature) => signature.startsWith("v1,"))
    .map((signature) => Buffer.from(signature.slice(3), "base64"))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
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
        verified: verifyWebhook(secret, request.headers, body),
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
