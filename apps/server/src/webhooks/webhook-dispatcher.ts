import { randomUUID } from "node:crypto";
import type { ClaimedDelivery, WebhookOutbox } from "@aptix/core";
import type { Logger } from "pino";
import type { ServiceMetrics } from "../telemetry/service-metrics.js";
import type { ConfiguredWebhook } from "./configured-webhooks.js";
import { retryDelayMs } from "./retry-schedule.js";
import { webhookSignature } from "./webhook-signature.js";

/** Longer than an attempt with its row's update: a claim expires only when its instance stopped. */
const CLAIM_MS = 30_000;

export interface WebhookDispatcherOptions {
  outbox: WebhookOutbox;
  webhooks: readonly ConfiguredWebhook[];
  metrics: Pick<ServiceMetrics, "countWebhookDelivery">;
  logger: Logger;
  /** Deliveries this instance attempts at once, at most. Default 8. */
  maxInFlight?: number;
  /** How often the outbox is asked for due deliveries while there is room. Default 1 s. */
  pollMs?: number;
  /** An answer later than this is a failed attempt. Default 10 s; keep it well below the claim's 30 s. */
  attemptTimeoutMs?: number;
}

type Outcome = "delivered" | "retried" | "dropped";

/**
 * Delivers the outbox's webhook events from this instance, beside every other: it claims due deliveries (a short
 * store step), posts each signed with no connection held, then removes it (a 2xx within the timeout), or
 * reschedules it (`retryDelayMs`), or drops it after its last attempt. At most `maxInFlight` at once. An instance
 * that stops mid-attempt leaves its claim to expire: another instance delivers again, under the same id.
 */
export class WebhookDispatcher {
  readonly #options: Required<Omit<WebhookDispatcherOptions, "webhooks">>;
  readonly #webhooks: ReadonlyMap<string, ConfiguredWebhook>;
  readonly #claimant = `whc_${randomUUID()}`;
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #stopped = false;

  constructor(options: WebhookDispatcherOptions) {
    const { webhooks, maxInFlight = 8, pollMs = 1_000, attemptTimeoutMs = 10_000, ...rest } = options;
    this.#options = { ...rest, maxInFlight, pollMs, attemptTimeoutMs };
    this.#webhooks = new Map(webhooks.map((webhook) => [webhook.target, webhook]));
  }

  start(): void {
    this.#schedule(0);
  }

  /** Claims nothing more and waits for the attempts under way to settle their rows. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#polling;
    await Promise.allSettled([...this.#inFlight]);
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#polling = this.#poll().finally(() => {
        this.#polling = undefined;
        this.#schedule(this.#options.pollMs);
      });
    }, delayMs);
    this.#timer.unref();
  }

  async #poll(): Promise<void> {
    const room = this.#options.maxInFlight - this.#inFlight.size;
    if (room <= 0 || this.#stopped) return;
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.#options.outbox.claimDue({
        claimant: this.#claimant,
        limit: room,
        claimMs: CLAIM_MS,
      });
    } catch (error) {
      this.#options.logger.warn({ err: error }, "could not read the webhook outbox; trying again");
      return;
    }
    for (const delivery of claimed) {
      const attempt = this.#deliver(delivery).finally(() => {
        this.#inFlight.delete(attempt);
        // A full batch may have left more due: look again at once rather than after the poll interval.
        if (claimed.length === room && !this.#polling) this.#schedule(0);
      });
      this.#inFlight.add(attempt);
    }
  }

  async #deliver(delivery: ClaimedDelivery): Promise<void> {
    const webhook = this.#webhooks.get(delivery.target);
    const status =
      webhook === undefined ? "unconfigured" : await post(webhook, delivery, this.#options.attemptTimeoutMs);
    const delivered = typeof status === "number" && status >= 200 && status < 300;
    const delayMs = delivered || webhook === undefined ? undefined : retryDelayMs(delivery.attempts);
    const outcome: Outcome = delivered ? "delivered" : delayMs === undefined ? "dropped" : "retried";
    const claim = { deliveryId: delivery.deliveryId, claimant: this.#claimant };
    try {
      if (delayMs === undefined) await this.#options.outbox.remove(claim);
      else await this.#options.outbox.retryLater({ ...claim, delayMs });
    } catch (error) {
      // The claim expires and the delivery is attempted again, under the same id.
      this.#options.logger.warn(
        { err: error, webhookId: delivery.deliveryId },
        "could not record a webhook delivery's attempt",
      );
      return;
    }
    this.#options.metrics.countWebhookDelivery(outcome);
    const line = {
      webhookId: delivery.deliveryId,
      webhook: safeUrl(delivery.target),
      attempt: delivery.attempts + 1,
      answer: status,
      ...(delayMs === undefined ? {} : { retryInMs: delayMs }),
    };
    if (outcome === "delivered") this.#options.logger.debug(line, "delivered a webhook event");
    else if (outcome === "retried")
      this.#options.logger.info(line, "a webhook delivery failed; it will be retried");
    else this.#options.logger.warn(line, "dropped a webhook event: its last delivery attempt failed");
  }
}

/**
 * Posts one attempt, signed for now; its HTTP status, or why there was none (a timeout, a refused connection).
 * Redirects are not followed: a receiver answers where it was configured.
 */
async function post(
  webhook: ConfiguredWebhook,
  delivery: ClaimedDelivery,
  timeoutMs: number,
): Promise<number | string> {
  const timestamp = Math.floor(Date.now() / 1_000);
  const { deliveryId: id, body } = delivery;
  try {
    const response = await fetch(webhook.target, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": webhookSignature(webhook.key, { id, timestamp, body }),
      },
      body,
    });
    await response.body?.cancel();
    return response.status;
  } catch (error) {
    return error instanceof Error ? error.name : "error";
  }
}

/** The URL without credentials, query or fragment: what a log may show of a receiver. */
function safeUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}
