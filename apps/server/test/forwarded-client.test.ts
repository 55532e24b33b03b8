import { describe, expect, it } from "vitest";
import { forwardedClient, ProxyList, UNKNOWN_CLIENT } from "../src/http/middleware/forwarded-client.js";

/** A load balancer in 10.0.0.0/8 in front of a proxy on the service's own machine. */
const trusted = new ProxyList(["127.0.0.1/32", "10.0.0.0/8", "2001:db8::/32"]);
const client = (peer: string, forwardedFor?: string) => forwardedClient({ peer, forwardedFor, trusted });

describe("the client address behind trusted proxies (X-Forwarded-For, right to left)", () => {
  it("is the socket's address for an untrusted peer, whatever it forwards", () => {
    expect(client("203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
    expect(client("203.0.113.7")).toBe("203.0.113.7");
    expect(
      forwardedClient({ peer: "127.0.0.1", forwardedFor: "198.51.100.1", trusted: new ProxyList([]) }),
    ).toBe("127.0.0.1");
  });

  it("is a trusted peer's own address when it forwards none", () => {
    expect(client("127.0.0.1")).toBe("127.0.0.1");
  });

  it("is the rightmost entry that is not a trusted hop; what the client wrote left of it is ignored", () => {
    expect(client("127.0.0.1", "198.51.100.1")).toBe("198.51.100.1");
    // The client sent `X-Forwarded-For: 1.1.1.1` itself; the proxy appended the address it saw.
    expect(client("127.0.0.1", "1.1.1.1, 198.51.100.1")).toBe("198.51.100.1");
    expect(client("127.0.0.1", "1.1.1.1, 198.51.100.1, 10.0.0.5")).toBe("198.51.100.1");
    expect(client("127.0.0.1", "garbage, 198.51.100.1, 10.0.0.5")).toBe("198.51.100.1");
    // Two X-Forwarded-For headers arrive joined by ", ", the first first.
    expect(client("127.0.0.1", "10.0.0.7,198.51.100.1 ,10.0.0.5")).toBe("198.51.100.1");
  });

  it("is the leftmost hop when every entry is trusted", () => {
    expect(client("127.0.0.1", "10.0.0.9, 10.0.0.5")).toBe("10.0.0.9");
  });

  it.each([
    ["198.51.100.1:5123", "198.51.100.1"],
    ["2001:DB9:0:0::7", "2001:db9::7"],
    ["[2001:db9::7]", "2001:db9::7"],
    ["[2001:db9::7]:443", "2001:db9::7"],
    ["::ffff:198.51.100.1", "198.51.100.1"],
    ["[::FFFF:198.51.100.1]:80", "198.51.100.1"],
    ["fe80::1%eth0", "fe80::1"],
  ])("reads %s as %s: one client, one key", (entry, address) => {
    expect(client("127.0.0.1", entry)).toBe(address);
  });

  it.each(["unknown", "_hidden", "", "198.51.100", "2001:db9::7]:443", "198.51.100.1 203.0.113.7"])(
    "is unknown when the trusted hop's entry is %j, never a name the caller chose",
    (entry) => {
      expect(client("127.0.0.1", entry)).toBe(UNKNOWN_CLIENT);
      expect(client("127.0.0.1", `198.51.100.1, ${entry}, 10.0.0.5`)).toBe(UNKNOWN_CLIENT);
    },
  );

  it("reads an IPv4-mapped or IPv6 peer against the trusted networks", () => {
    expect(client("::ffff:127.0.0.1", "198.51.100.1")).toBe("198.51.100.1");
    expect(client("::ffff:203.0.113.7", "198.51.100.1")).toBe("203.0.113.7");
    expect(client("2001:db8::1", "198.51.100.1")).toBe("198.51.100.1");
    expect(client("2001:db9::1", "198.51.100.1")).toBe("2001:db9::1");
  });
});
