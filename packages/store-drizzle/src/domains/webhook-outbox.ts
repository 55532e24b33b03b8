import type {
  ClaimDeliveriesInput,
  ClaimedDelivery,
  DeliveryClaim,
  WebhookDelivery,
  WebhookOutbox,
} from "@aptix/core";
import { and, asc, eq, inArray, isNull, lte, or, type SQL, sql } from "drizzle-orm";
import { webhookDeliveries } from "../schema.js";
import type { LeaseClock } from "./lease.js";
import { rowsJson, rowsWhere, type StoreDatabase } from "./rows.js";

const table = webhookDeliveries;

/**
 * The insert of the deliveries the placeholder `webhooks` holds (`webhookValues`), due at the leases' now,
 * written only where `guard` holds: a part of the statement of the transition that made their events.
 */
export function webhookWrite(db: StoreDatabase, leaseClock: LeaseClock, guard: SQL) {
  return db
    .insert(table)
    .select(rowsWhere(table, "webhooks", guard, { attempts: sql`0`, dueAt: leaseClock.now() }))
    .returning({ deliveryId: table.deliveryId });
}

/** The placeholder values of `webhookWrite`, with the shape part that tells a statement with them. */
export function webhookValues(deliveries: readonly WebhookDelivery[] = []): {
  shape: string;
  values: Record<string, unknown>;
} {
  if (deliveries.length === 0) return { shape: "", values: {} };
  const rows = deliveries.map(({ deliveryId, target, body }) => ({ deliveryId, target, body }));
  return { shape: "webhooks", values: { webhooks: rowsJson(table, rows as never) } };
}

/**
 * The webhook outbox (`WebhookOutbox`) on drizzle: the turns' statements insert into it (`webhookWrite`); a
 * claim is one statement that skips rows another claim has locked (`FOR UPDATE SKIP LOCKED`), so instances
 * claiming at once each get their own. Due times and claims are judged by the leases' clock.
 */
export class DrizzleWebhookOutbox implements WebhookOutbox {
  readonly #db: StoreDatabase;
  readonly #clock: LeaseClock;

  constructor(db: StoreDatabase, clock: LeaseClock) {
    this.#db = db;
    this.#clock = clock;
  }

  async enqueue(deliveries: readonly WebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const { values } = webhookValues(deliveries);
    await webhookWrite(this.#db, this.#clock, sql`true`)
      .prepare("enqueue_webhook_deliveries")
      .execute({ ...values, ...this.#clock.values() });
  }

  async claimDue({ claimant, limit, claimMs }: ClaimDeliveriesInput): Promise<ClaimedDelivery[]> {
    const count = Math.ceil(limit);
    if (!(count > 0)) return [];
    const now = this.#clock.now();
    const due = this.#db
      .select({ deliveryId: table.deliveryId })
      .from(table)
      .where(and(lte(table.dueAt, now), or(isNull(table.claimedUntil), lte(table.claimedUntil, now))))
      .orderBy(asc(table.dueAt))
      .limit(count)
      .for("update", { skipLocked: true });
    const rows = await this.#db
      .update(table)
      .set({ claimant, claimedUntil: this.#clock.now("claimMs") })
      .where(inArray(table.deliveryId, due))
      .returning()
      .prepare("claim_webhook_deliveries")
      .execute({ claimMs, ...this.#clock.values() });
    return rows
      .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime())
      .map(({ deliveryId, target, body, attempts }) => ({ deliveryId, target, body, attempts }));
  }

  async remove({ deliveryId, claimant }: DeliveryClaim): Promise<void> {
    await this.#db.delete(table).where(held(deliveryId, claimant));
  }

  async retryLater({ deliveryId, claimant, delayMs }: DeliveryClaim & { delayMs: number }): Promise<void> {
    await this.#db
      .update(table)
      .set({
        attempts: sql`${table.attempts} + 1`,
        dueAt: this.#clock.now("delayMs"),
        claimant: null,
        claimedUntil: null,
      })
      .where(held(deliveryId, claimant))
      .prepare("retry_webhook_delivery")
      .execute({ delayMs, ...this.#clock.values() });
  }
}

/** The delivery while `claimant` holds its claim. */
function held(deliveryId: string, claimant: string): SQL | undefined {
  return and(eq(table.deliveryId, deliveryId), eq(table.claimant, claimant));
}
