import { isIP } from "node:net";
import { z } from "zod";

/**
 * `APTIX_TRUSTED_PROXIES`: the proxies whose `X-Forwarded-For` names the client, comma-separated CIDRs
 * (`10.0.0.0/8`, `2001:db8::/32`) or single addresses (`127.0.0.1`, taken as /32 or /128); empty entries skipped,
 * none when unset. Each entry comes out as `address/prefix`. A malformed entry is refused at start-up naming it:
 * one read wrongly would trust, or fail to trust, a whole network without a word.
 */
export const TrustedProxiesSchema = z
  .string()
  .optional()
  .transform((text, context) => {
    const ranges = new Set<string>();
    for (const [index, raw] of (text ?? "").split(",").entries()) {
      const entry = raw.trim();
      if (entry === "") continue;
      const range = cidr(entry);
      if (range === undefined) {
        context.addIssue({
          code: "custom",
          message: `entry ${index + 1} ${JSON.stringify(entry)} is not an IP address or CIDR such as 10.0.0.0/8, 127.0.0.1 or 2001:db8::/32`,
        });
        continue;
      }
      ranges.add(range);
    }
    return [...ranges];
  });

/** `address/prefix` for an address or a CIDR of one, with a prefix in its family's range; undefined otherwise. */
function cidr(entry: string): string | undefined {
  const [address = "", prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  // A zone (`fe80::1%eth0`) names an interface, not a network: no peer address carries one here.
  if (family === 0 || address.includes("%") || rest.length > 0) return undefined;
  const bits = family === 4 ? 32 : 128;
  if (prefix === undefined) return `${address}/${bits}`;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) return undefined;
  return `${address}/${Number(prefix)}`;
}
