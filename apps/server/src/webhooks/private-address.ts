import { BlockList, isIP } from "node:net";

/** Loopback, private, link-local, shared (CGNAT) and unspecified ranges: never the public internet. */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.168.0.0", 16],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
] as const) {
  PRIVATE.addSubnet(network, prefix, "ipv6");
}

/** Whether `address` (an IP literal) is loopback or private; an IPv4 address mapped into IPv6 as its IPv4 one. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)?.[1];
  if (mapped !== undefined) return PRIVATE.check(mapped, "ipv4");
  const family = isIP(bare);
  if (family === 0) return false;
  return PRIVATE.check(bare, family === 4 ? "ipv4" : "ipv6");
}
