import type {
  ClaimDeliveriesInput,
  ClaimedDelivery,
  DeliveryClaim,
  WebhookDelivery,
  WebhookOutbox,
} from "../ports/webhook-outbox.js";
import { copy, type InMemorySessions, type OutboxEntry } from "./in-memory-sessions.js";

/**
 * A `WebhookOutbox` in process memory, sharing the turns' state (their writes add to it). A delivery is due
 * once its `dueAt` is at or before the store's now and no unexpired claim holds it; claims and delays are judged
 * by the store's clock.
 */
export class InMemoryWebhookOutbox implements WebhookOutbox {
  readonly #shared: InMemorySessions;

  constructor(shared: InMemorySessions) {
    this.#shared = shared;
  }

  async enqueue(deliveries: readonly WebhookDelivery[]): Promise<void> {
    this.#shared.keepWebhooks(deliveries);
  }

  async claimDue({ claimant, limit, claimMs }: ClaimDeliveriesInput): Promise<ClaimedDelivery[]> {
    const now = this.#shared.clock.now().getTime();
    const claimed: ClaimedDelivery[] = [];
    for (const entry of this.#shared.webhooks.values()) {
      if (claimed.length >= limit) break;
      if (entry.dueAt.getTime() > now || (entry.claim !== null && entry.claim.until.getTime() > now))
        continue;
      entry.claim = { claimant, until: new Date(now + claimMs) };
      claimed.push({ ...copy(entry.delivery), attempts: entry.attempts });
    }
    return claimed;
  }

  async remove(claim: DeliveryClaim): Promise<void> {
    if (this.#held(claim) !== undefined) this.#shared.webhooks.delete(claim.deliveryId);
  }

  async retryLater(claim: DeliveryClaim & { delayMs: number }): Promise<void> {
    const entry = this.#held(claim);
    if (entry === undefined) return;
    entry.attempts += 1;
    entry.dueAt = new Date(this.#shared.clock.now().getTime() + claim.delayMs);
    entry.claim = null;
  }

  /** The delivery while `claimant` holds its claim, expired or not, until another claimant takes it. */
  #held({ deliveryId, claimant }: DeliveryClaim): OutboxEntry | undefined {
    const entry = this.#shared.webhooks.get(deliveryId);
    return entry?.claim?.claimant === claimant ? entry : undefined;
  }
}
