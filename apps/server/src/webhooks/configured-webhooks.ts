import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { WebhookSubscription } from "@aptix/core";
import type { CatalogConfig } from "../config/catalog-config-schema.js";
import { ConfigError } from "../config/config-error.js";
import type { ServerEnv } from "../config/server-env.js";
import { isPrivateAddress } from "./private-address.js";
import { webhookKey } from "./webhook-signature.js";

/** A webhook ready to deliver to: what core fans events out by, and the key its deliveries are signed with. */
export interface ConfiguredWebhook extends WebhookSubscription {
  key: Buffer;
}

/**
 * The webhooks of `APTIX_CONFIG`, each with its secret read from the variable it names. Stops start-up naming the
 * field or variable: a secret unset or not `whsec_<base64>` (never repeated), or a URL whose host is or resolves
 * to a loopback or private address while `APTIX_WEBHOOK_ALLOW_PRIVATE` is not 1.
 */
export async function configuredWebhooks(
  webhooks: CatalogConfig["webhooks"],
  env: Pick<ServerEnv, "variables" | "APTIX_WEBHOOK_ALLOW_PRIVATE">,
): Promise<ConfiguredWebhook[]> {
  const problems: string[] = [];
  const configured: ConfiguredWebhook[] = [];
  for (const [index, webhook] of (webhooks ?? []).entries()) {
    const field = `webhooks[${index}]`;
    const secret = env.variables[webhook.secretEnv];
    const key = secret === undefined ? undefined : webhookKey(secret);
    if (secret === undefined || secret === "") {
      problems.push(`${webhook.secretEnv}: is unset (${field}.secretEnv names it)`);
    } else if (key === undefined) {
      problems.push(
        `${webhook.secretEnv}: must be whsec_ then a key of at least 16 bytes in base64 (${field}.secretEnv names it)`,
      );
    }
    if (env.APTIX_WEBHOOK_ALLOW_PRIVATE !== "1" && (await reachesPrivate(webhook.url))) {
      problems.push(
        `${field}.url: ${webhook.url} is a loopback or private address; set APTIX_WEBHOOK_ALLOW_PRIVATE=1 to allow it`,
      );
    }
    if (key === undefined) continue;
    const { url, events, principals } = webhook;
    configured.push({
      target: url,
      key,
      ...(events ? { events } : {}),
      ...(principals ? { principals } : {}),
    });
  }
  if (problems.length > 0) throw new ConfigError("APTIX_CONFIG: webhooks are invalid", problems);
  return configured;
}

/** Whether the URL's host is a private address or a name any of whose addresses is. */
async function reachesPrivate(url: string): Promise<boolean> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) return isPrivateAddress(host);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  // A name that does not resolve now is let through: its deliveries fail and are retried, as any receiver's that is down.
  const addresses = await lookup(host, { all: true }).catch(() => []);
  return addresses.some(({ address }) => isPrivateAddress(address));
}
