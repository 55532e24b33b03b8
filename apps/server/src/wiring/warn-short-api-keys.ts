import type { Logger } from "pino";

/** Characters under which a key gets a warning: `openssl rand -hex 32` makes 64, of 256 bits. */
const SHORT_API_KEY_CHARS = 32;

/**
 * Says at start-up which principals' keys are shorter than 32 characters, naming the principal, never the key:
 * the failed-authentication limit slows a guesser without locking anyone out, so a key must be too long to
 * guess on its own. Start-up refuses keys under 16 characters outright (`readServerEnv`).
 */
export function warnShortApiKeys(logger: Logger, apiKeys: ReadonlyMap<string, string>): void {
  for (const [key, principal] of apiKeys) {
    if (key.length >= SHORT_API_KEY_CHARS) continue;
    logger.warn(
      `APTIX_API_KEYS: the key of principal ${JSON.stringify(principal)} is shorter than ${SHORT_API_KEY_CHARS} characters; make a key that cannot be guessed with \`openssl rand -hex 32\`.`,
    );
  }
}
