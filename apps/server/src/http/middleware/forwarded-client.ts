import { BlockList, isIP } from "node:net";

/** The client address of a request whose forwarding chain names no address a hop could vouch for. */
export const UNKNOWN_CLIENT = "unknown";

/**
 * The client of a request from `peer` (the socket's address), through the proxies of `trusted` (CIDRs, as
 * APTIX_TRUSTED_PROXIES gives them). Only a trusted peer's `X-Forwarded-For` is read, right to left: each
 * entry was appended by the hop to its right, so the first entry whose writer is trusted but which is not itself
 * a trusted hop is the client; an entry left of an untrusted one was written by whoever the client is, and says
 * nothing. A trusted hop's entry that is no address (`unknown`, an obfuscated name, garbage) ends the walk:
 * the client is UNKNOWN_CLIENT, never a string the caller chose. When every entry is a trusted hop, the
 * leftmost is the client.
 */
export function forwardedClient(options: {
  peer: string;
  forwardedFor: string | undefined;
  trusted: ProxyList;
}): string {
  const { trusted, forwardedFor } = options;
  let client = ipAddress(options.peer) ?? options.peer;
  if (forwardedFor === undefined || !trusted.has(client)) return client;
  const entries = forwardedFor.split(",");
  for (let index = entries.length - 1; index >= 0; index--) {
    const address = ipAddress(entries[index] ?? "");
    if (address === undefined) return UNKNOWN_CLIENT;
    client = address;
    if (!trusted.has(client)) return client;
  }
  return client;
}

/** The proxies of APTIX_TRUSTED_PROXIES, as a set of networks an address is looked up in. */
export class ProxyList {
  readonly #networks = new BlockList();
  readonly size: number;

  /** `ranges`: `address/prefix` entries, as the config schema leaves them. */
  constructor(ranges: readonly string[]) {
    for (const range of ranges) {
      const [address = "", prefix] = range.split("/");
      this.#networks.addSubnet(address, Number(prefix), isIP(address) === 6 ? "ipv6" : "ipv4");
    }
    this.size = ranges.length;
  }

  /** Whether `address` (a plain IPv4 or IPv6 address) lies in one of the networks. */
  has(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.size > 0 && this.#networks.check(address, family === 6 ? "ipv6" : "ipv4");
  }
}

/**
 * The address an X-Forwarded-For entry (or a socket) names, written as Node writes a peer's: `1.2.3.4`,
 * `2001:db8::1`. Proxies also write a port (`1.2.3.4:5678`, `[2001:db8::1]:443`), brackets, an IPv4-mapped
 * IPv6 address (`::ffff:1.2.3.4`, the IPv4 client of a dual-stack socket), a zone (`fe80::1%eth0`) or another
 * spelling of an IPv6 address (`2001:DB8:0::1`): all undone, so one client is one key. Anything else is undefined.
 */
function ipAddress(entry: string): string | undefined {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text)?.[1];
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text)?.[1];
  const candidate = bracketed ?? withPort ?? text;
  if (isIP(candidate) === 4) return candidate;
  const unzoned = candidate.replace(/%[^%]*$/, "");
  if (isIP(unzoned) !== 6) return undefined;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(unzoned)?.[1];
  // The URL parser writes an IPv6 address in its one canonical form (RFC 5952), bracketed.
  return mapped ?? new URL(`http://[${unzoned}]`).hostname.slice(1, -1);
}
