/**
 * One event's delivery to one webhook, as the outbox keeps it: written in the same atomic step as the transition
 * that made the event, so a crash loses none. `body` is the exact JSON sent, the same bytes on every attempt.
 */
export interface WebhookDelivery {
  /** The `webhook-id` every attempt carries: a receiver drops a second delivery of the same id. */
  deliveryId: string;
  /** The webhook it goes to: its URL as configured. */
  target: string;
  body: string;
}

/** A delivery claimed for an attempt: `attempts` is how many failed before it. */
export interface ClaimedDelivery extends WebhookDelivery {
  attempts: number;
}

export interface ClaimDeliveriesInput {
  /**
   * Unique per claim: only it may remove or reschedule what it claimed, its claim expired or not, until another
   * claimant takes the delivery.
   */
  claimant: string;
  limit: number;
  /** How long the claim lasts, from the store's now: past it, any instance may claim the delivery again. */
  claimMs: number;
}

export interface DeliveryClaim {
  deliveryId: string;
  claimant: string;
}

/**
 * The outbox of webhook deliveries: the turns' writes add to it (`TurnWrite.webhooks`); any instance takes what
 * is due, delivers it with no connection held, and then removes or reschedules it. Each method is one short
 * atomic step, judged by the store's clock.
 */
export interface WebhookOutbox {
  /** Adds deliveries of events no transition makes (a refused request), due at once. */
  enqueue(deliveries: readonly WebhookDelivery[]): Promise<void>;
  /**
   * Claims up to `limit` deliveries that are due and not claimed (or whose claim expired), oldest first, in one
   * step: two claimants never get the same delivery while a claim holds.
   */
  claimDue(input: ClaimDeliveriesInput): Promise<ClaimedDelivery[]>;
  /** Removes a delivery: made, or given up. A no-op unless `claimant` still holds it. */
  remove(claim: DeliveryClaim): Promise<void>;
  /** Releases the claim, counts a failed attempt and makes it due `delayMs` from the store's now. */
  retryLater(claim: DeliveryClaim & { delayMs: number }): Promise<void>;
}
