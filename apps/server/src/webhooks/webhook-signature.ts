import { createHmac } from "node:crypto";

/** A signing secret as operators write it: `whsec_` then the key in base64. */
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** The key of a `whsec_<base64>` secret, or undefined when it is not one (or holds too short a key). */
export function webhookKey(secret: string): Buffer | undefined {
  const base64 = SECRET.exec(secret.trim())?.[1];
  if (base64 === undefined) return undefined;
  const key = Buffer.from(base64, "base64");
  // At least 128 bits: a shorter key is guessable, and base64 of nothing decodes to nothing.
  return key.length >= 16 ? key : undefined;
}

/**
 * The `webhook-signature` header of one attempt, as Standard Webhooks define it: `v1,` then the base64 HMAC-SHA256,
 * under the secret's key, of `<id>.<timestamp>.<body>` (the timestamp in whole seconds since the epoch).
 */
export function webhookSignature(
  key: Buffer,
  attempt: { id: string; timestamp: number; body: string },
): string {
  const mac = createHmac("sha256", key).update(`${attempt.id}.${attempt.timestamp}.${attempt.body}`);
  return `v1,${mac.digest("base64")}`;
}
