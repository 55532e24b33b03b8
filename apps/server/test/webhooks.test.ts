import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inMemorySessionStores, ManualClock } from "@aptix/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../src/config/config-error.js";
import { silentLogger } from "../src/logging/silent-logger.js";
import { configuredWebhooks } from "../src/webhooks/configured-webhooks.js";
import { isPrivateAddress } from "../src/webhooks/private-address.js";
import { RETRY_DELAYS_MS, retryDelayMs } from "../src/webhooks/retry-schedule.js";
import { WebhookDispatcher } from "../src/webhooks/webhook-dispatcher.js";
import { webhookKey, webhookSignature } from "../src/webhooks/webhook-signature.js";

// The Standard Webhooks specification's own example: its secret, id, timestamp, payload and signature.
const SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("webhook signatures", () => {
  it("signs as the Standard Webhooks example does", () => {
    const key = webhookKey(SPEC_SECRET);
    expect(key).toBeDefined();
    const signature = webhookSignature(key as Buffer, {
      id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      timestamp: 1614265330,
      body: '{"test": 2432232314}',
    });
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("reads only whsec_ secrets holding a key of 16 bytes or more", () => {
    expect(webhookKey("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).toBeUndefined();
    expect(webhookKey("whsec_")).toBeUndefined();
    expect(webhookKey("whsec_c2hvcnQ=")).toBeUndefined();
    expect(webhookKey("whsec_not base64!")).toBeUndefined();
    expect(webhookKey(`whsec_${Buffer.alloc(16, 7).toString("base64")}`)?.length).toBe(16);
  });
});

describe("the retry schedule", () => {
  it("waits 5 s, 30 s, 2 min, 10 min, 1 h and 6 h after the failed attempts, then gives up", () => {
    expect([0, 1, 2, 3, 4, 5].map(retryDelayMs)).toEqual([
      5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000,
    ]);
    expect(retryDelayMs(RETRY_DELAYS_MS.length)).toBeUndefined();
  });
});

describe("webhooks of APTIX_CONFIG", () => {
  const secret = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
  const env = (variables: Record<string, string>, allow: "0" | "1" = "0") => ({
    variables,
    APTIX_WEBHOOK_ALLOW_PRIVATE: allow,
  });

  it("refuses loopback and private addresses unless allowed, naming the field", async () => {
    for (const url of [
      "http://127.0.0.1:9/hook",
      "http://localhost/hook",
      "http://10.1.2.3/hook",
      "http://192.168.0.1/hook",
      "http://[::1]/hook",
      "http://[::ffff:172.16.0.1]/hook",
    ]) {
      const refused = configuredWebhooks([{ url, secretEnv: "HOOK_SECRET" }], env({ HOOK_SECRET: secret }));
      await expect(refused).rejects.toThrow(ConfigError);
      await expect(refused).rejects.toThrow(/webhooks\[0\]\.url: .* APTIX_WEBHOOK_ALLOW_PRIVATE=1/);
    }
    const allowed = await configuredWebhooks(
      [{ url: "http://127.0.0.1:9/hook", secretEnv: "HOOK_SECRET", events: ["turn.completed"] }],
      env({ HOOK_SECRET: secret }, "1"),
    );
    expect(allowed).toEqual([
      { target: "http://127.0.0.1:9/hook", key: Buffer.alloc(32, 1), events: ["turn.completed"] },
    ]);
    expect(["8.8.8.8", "2001:4860:4860::8888", "172.32.0.1"].map(isPrivateAddress)).toEqual([
      false,
      false,
      false,
    ]);
  });

  it("names the variable of a secret unset or malformed, never repeating its value", async () => {
    const unset = configuredWebhooks(
      [{ url: "http://127.0.0.1/hook", secretEnv: "HOOK_SECRET" }],
      env({}, "1"),
    );
    await expect(unset).rejects.toThrow("HOOK_SECRET: is unset (webhooks[0].secretEnv names it)");
    const malformed = configuredWebhooks(
      [{ url: "http://127.0.0.1/hook", secretEnv: "HOOK_SECRET" }],
      env({ HOOK_SECRET: "hunter2-but-longer-than-that" }, "1"),
    );
    await expect(malformed).rejects.toThrow(/HOOK_SECRET: must be whsec_/);
    await expect(malformed).rejects.not.toThrow(/hunter2/);
  });
});

describe("WebhookDispatcher", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  /**
   * A loopback receiver answering each request as `answer` says (`"hang"`: never), recording what it got.
   * `statuses`: the next of them each time, then 200.
   */
  async function receiver(answer: number[] | ((id: string) => number | "hang")) {
    const answerOf = Array.isArray(answer) ? () => answer.shift() ?? 200 : answer;
    const received: Array<{ headers: IncomingMessage["headers"]; body: string }> = [];
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        received.push({ headers: request.headers, body });
        const status = answerOf(String(request.headers["webhook-id"]));
        if (status === "hang") return;
        response.statusCode = status;
        response.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received };
  }

  /** A dispatcher over an in-memory outbox holding `deliveries` to `url`, counting each outcome in `counted`. */
  async function dispatching(
    url: string,
    deliveries: Array<{ deliveryId: string; body: string }>,
    options: { attemptTimeoutMs?: number } = {},
  ) {
    const clock = new ManualClock();
    const stores = inMemorySessionStores(clock);
    await stores.webhooks.enqueue(deliveries.map((delivery) => ({ ...delivery, target: url })));
    const counted: string[] = [];
    const dispatcher = new WebhookDispatcher({
      outbox: stores.webhooks,
      webhooks: [{ target: url, key: Buffer.alloc(16, 2) }],
      metrics: { countWebhookDelivery: (outcome) => counted.push(outcome) },
      logger: silentLogger,
      pollMs: 5,
      ...options,
    });
    return { clock, outbox: stores.webhooks, counted, dispatcher };
  }

  async function until(check: () => boolean): Promise<void> {
    while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  it("retries a failed delivery on the schedule with the same id and body, then drops it, counting each", async () => {
    const { url, received } = await receiver(Array(RETRY_DELAYS_MS.length + 1).fill(500));
    const body = '{"type":"turn.completed"}';
    const { clock, outbox, counted, dispatcher } = await dispatching(url, [{ deliveryId: "msg_1", body }]);
    dispatcher.start();
    try {
      for (const [attempt, delayMs] of RETRY_DELAYS_MS.entries()) {
        await until(() => counted.length === attempt + 1);
        // Not due again before its delay, by the store's clock.
        clock.advance(delayMs - 1);
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(received).toHaveLength(attempt + 1);
        clock.advance(1);
      }
      await until(() => counted.length === RETRY_DELAYS_MS.length + 1);
    } finally {
      await dispatcher.stop();
    }
    expect(counted).toEqual([...RETRY_DELAYS_MS.map(() => "retried"), "dropped"]);
    expect(new Set(received.map((each) => each.headers["webhook-id"]))).toEqual(new Set(["msg_1"]));
    expect(new Set(received.map((each) => each.body))).toEqual(new Set([body]));
    expect(await outbox.claimDue({ claimant: "c", limit: 5, claimMs: 1 })).toEqual([]);
  });

  it("fails an attempt the receiver leaves unanswered past its timeout, while other deliveries go on", async () => {
    const attempts = new Map<string, number>();
    const { url, received } = await receiver((id) => {
      attempts.set(id, (attempts.get(id) ?? 0) + 1);
      return id === "msg_slow" && attempts.get(id) === 1 ? "hang" : 200;
    });
    const deliveries = [
      { deliveryId: "msg_slow", body: '{"n":1}' },
      { deliveryId: "msg_fast", body: '{"n":2}' },
    ];
    const { clock, outbox, counted, dispatcher } = await dispatching(url, deliveries, {
      attemptTimeoutMs: 300,
    });
    dispatcher.start();
    try {
      await until(() => counted.length === 2);
      // The fast one was delivered while the slow one hung; the slow one's attempt then timed out.
      expect(counted).toEqual(["delivered", "retried"]);
      clock.advance(retryDelayMs(0) ?? 0);
      await until(() => counted.length === 3);
    } finally {
      await dispatcher.stop();
    }
    expect(counted).toEqual(["delivered", "retried", "delivered"]);
    expect(received.map((each) => each.headers["webhook-id"]).sort()).toEqual([
      "msg_fast",
      "msg_slow",
      "msg_slow",
    ]);
    expect(await outbox.claimDue({ claimant: "c", limit: 5, claimMs: 1 })).toEqual([]);
  });
});
