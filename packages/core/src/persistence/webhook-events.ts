import type { IdGenerator } from "../ports/id-generator.js";
import type { LlmCallWrite, TurnWrite } from "../ports/turn-store.js";
import type { WebhookDelivery } from "../ports/webhook-outbox.js";
import type { SessionKey } from "../records/session-record.js";
import type { TurnPatch } from "../records/turn-record.js";
import type { WebhookEvent, WebhookEventType, WebhookSubscription } from "../records/webhook-event.js";

/** The turn statuses a webhook hears of, and the event each makes. */
const TURN_EVENTS: Readonly<Record<string, WebhookEventType>> = {
  completed: "turn.completed",
  failed: "turn.failed",
  cancelled: "turn.cancelled",
  awaiting_client_tools: "turn.awaiting_client_tools",
};

/**
 * Decides which webhook events a write makes and what each webhook is sent: one delivery per matching webhook,
 * its body fixed here, so every attempt sends the same bytes under the same `webhook-id`. Fanning out at write
 * time keeps each webhook's retries its own, and filters by the configuration the event was made under.
 */
export class WebhookEvents {
  readonly #subscriptions: readonly WebhookSubscription[];
  readonly #ids: IdGenerator;

  constructor(subscriptions: readonly WebhookSubscription[], ids: IdGenerator) {
    this.#subscriptions = subscriptions;
    this.#ids = ids;
  }

  /** The deliveries of what the turns' patches and the calls of `write` make. */
  ofWrite(write: TurnWrite): WebhookDelivery[] {
    const calls = write.guard === "lease" ? (write.llmCalls ?? []) : [];
    return [
      ...calls.flatMap((call) => this.ofCall(write.key, call, write.now)),
      ...(write.turnPatches ?? []).flatMap(({ turnId, patch }) =>
        this.#ofPatch(write.key, turnId, patch, write.now),
      ),
    ];
  }

  /** A call that wrote a compaction's summary compacted its session. */
  ofCall(key: SessionKey, call: LlmCallWrite, now: Date): WebhookDelivery[] {
    if (call.compaction === undefined) return [];
    return this.of("session.compacted", { ...sessionOf(key), turnId: call.call.turnId }, now);
  }

  /** The deliveries of one event, one per webhook that hears it. */
  of(type: WebhookEventType, data: WebhookEvent["data"], now: Date): WebhookDelivery[] {
    const hearing = this.#subscriptions.filter(
      (webhook) =>
        (webhook.events === undefined || webhook.events.includes(type)) &&
        (webhook.principals === undefined || webhook.principals.includes(data.principal)),
    );
    if (hearing.length === 0) return [];
    const body = JSON.stringify({ type, timestamp: now.toISOString(), data } satisfies WebhookEvent);
    return hearing.map(({ target }) => ({ deliveryId: this.#ids.newId("msg"), target, body }));
  }

  #ofPatch(key: SessionKey, turnId: string, patch: TurnPatch, now: Date): WebhookDelivery[] {
    const type = patch.status === undefined ? undefined : TURN_EVENTS[patch.status];
    if (type === undefined) return [];
    const result = patch.rounds?.at(-1)?.result;
    const data = { ...sessionOf(key), turnId, status: patch.status, ...(result ? { result } : {}) };
    const refused = patch.error?.code === "BUDGET_EXCEEDED";
    return [...this.of(type, data, now), ...(refused ? this.of("budget.exceeded", data, now) : [])];
  }
}

function sessionOf({ principal, sessionId }: SessionKey): { principal: string; sessionId: string } {
  return { principal, sessionId };
}
