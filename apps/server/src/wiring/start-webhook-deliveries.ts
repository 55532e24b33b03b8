import type { AptixStore } from "@aptix/store-drizzle";
import type { Logger } from "pino";
import type { ServiceMetrics } from "../telemetry/service-metrics.js";
import type { ConfiguredWebhook } from "../webhooks/configured-webhooks.js";
import { WebhookDispatcher } from "../webhooks/webhook-dispatcher.js";

/**
 * Delivers the outbox's webhook events from this instance, beside every other on the database. With no webhook
 * configured no turn here writes to the outbox, so nothing is started.
 */
export function startWebhookDeliveries(
  webhooks: readonly ConfiguredWebhook[],
  parts: { store: AptixStore; metrics: ServiceMetrics; logger: Logger },
): { stop(): Promise<void> } {
  if (webhooks.length === 0) return { stop: async () => {} };
  const dispatcher = new WebhookDispatcher({
    outbox: parts.store.sessions.webhooks,
    webhooks,
    metrics: parts.metrics,
    logger: parts.logger,
  });
  dispatcher.start();
  return dispatcher;
}
