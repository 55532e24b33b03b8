import { randomBytes } from "node:crypto";
import type { Clock } from "@aptix/core";
import { eq } from "drizzle-orm";
import { deploymentSecrets } from "../schema.js";
import type { StoreDatabase } from "./rows.js";

/** A made secret's size: as many bytes as SHA-256's output, an HMAC key's full strength. */
const SECRET_BYTES = 32;

/**
 * Secrets made once per database and shared by every instance on it: the first to ask for one inserts a random
 * one; every other, then or later, reads that one (an insert that loses the race changes nothing).
 */
export class DeploymentSecrets {
  readonly #db: StoreDatabase;
  readonly #clock: Clock;

  constructor(db: StoreDatabase, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async secret(name: string): Promise<Uint8Array> {
    await this.#db
      .insert(deploymentSecrets)
      .values({ name, secret: randomBytes(SECRET_BYTES), createdAt: this.#clock.now() })
      .onConflictDoNothing({ target: deploymentSecrets.name });
    const [kept] = await this.#db
      .select({ secret: deploymentSecrets.secret })
      .from(deploymentSecrets)
      .where(eq(deploymentSecrets.name, name));
    if (kept === undefined) throw new Error(`The deployment secret ${JSON.stringify(name)} was not kept.`);
    return kept.secret;
  }
}
