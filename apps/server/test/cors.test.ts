import { describe, expect, it } from "vitest";
import { readServerEnv } from "../src/config/server-env.js";
import { setup } from "./http-app-setup.js";

const APP = "https://app.example.com";
const LOOPBACK = { incoming: { socket: { remoteAddress: "127.0.0.1" } } };
/** A request of alice's from a page of `origin`. */
const fromPage = (origin: string) => ({ headers: { authorization: "Bearer alice-key-0123456789", origin } });

/** A browser's preflight of a JSON POST with an API key from a page of `origin`. */
const preflight = (origin: string) => ({
  method: "OPTIONS",
  headers: {
    origin,
    "access-control-request-method": "POST",
    "access-control-request-headers": "authorization,content-type",
  },
});

describe("APTIX_CORS_ORIGINS", () => {
  it("reads comma-separated origins, none when unset", () => {
    expect(readServerEnv({}).APTIX_CORS_ORIGINS).toEqual([]);
    expect(
      readServerEnv({ APTIX_CORS_ORIGINS: ` ${APP}, http://localhost:5173,,${APP}` }).APTIX_CORS_ORIGINS,
    ).toEqual([APP, "http://localhost:5173"]);
  });

  it.each([
    ["app.example.com", 'entry 1 "app.example.com" is not an origin'],
    [`${APP}/`, `must be written as its origin ${APP}`],
    [`${APP}/ui`, `must be written as its origin ${APP}`],
    ["HTTPS://App.Example.com", `must be written as its origin ${APP}`],
    ["https://app.example.com:443", `must be written as its origin ${APP}`],
    ["*", "is not an origin"],
    [`${APP},ftp://files.example.com`, 'entry 2 "ftp://files.example.com" must be an http(s) origin'],
  ])("stops start-up naming APTIX_CORS_ORIGINS for %s", (value, message) => {
    expect(() => readServerEnv({ APTIX_CORS_ORIGINS: value })).toThrow(/APTIX_CORS_ORIGINS="[^\n]*": /);
    expect(() => readServerEnv({ APTIX_CORS_ORIGINS: value })).toThrow(message);
  });
});

describe("CORS for the pages of APTIX_CORS_ORIGINS", () => {
  it("answers a listed origin's preflight with what a browser client sends", async () => {
    const { app } = setup({ corsOrigins: [APP] });
    const response = await app.request("/v1/agent/execute", preflight(APP));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe(APP);
    expect(response.headers.get("access-control-allow-methods")?.split(",")).toEqual(
      expect.arrayContaining(["GET", "POST", "PUT", "DELETE"]),
    );
    expect(response.headers.get("access-control-allow-headers")?.toLowerCase().split(",")).toEqual(
      expect.arrayContaining(["authorization", "content-type", "last-event-id"]),
    );
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it("allows no other origin", async () => {
    const { app } = setup({ corsOrigins: [APP] });
    const response = await app.request("/v1/agent/execute", preflight("https://evil.example"));
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const read = await app.request("/v1/sessions/nope", fromPage("https://evil.example"));
    expect(read.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("marks answers, failures included, as readable by the listed origin, with the headers a client reads", async () => {
    const { app, post, provider } = setup({ corsOrigins: [APP] });
    provider.enqueue({ text: "Hello." });
    const answered = await post({ sessionId: "s1", turnId: "t1", instruction: "Hi" }, undefined, {
      origin: APP,
    });
    expect(answered.status).toBe(200);
    expect(answered.headers.get("access-control-allow-origin")).toBe(APP);
    expect(answered.headers.get("vary")).toContain("Origin");
    const exposed = answered.headers.get("access-control-expose-headers")?.toLowerCase().split(",");
    expect(exposed).toEqual(
      expect.arrayContaining(["retry-after", "x-request-id", "content-disposition", "etag"]),
    );
    const unknown = await app.request("/v1/sessions/nope", fromPage(APP));
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("access-control-allow-origin")).toBe(APP);
    const unauthorized = await app.request("/v1/sessions/s1", { headers: { origin: APP } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe(APP);
  });

  it("answers no preflight when no origin is listed: the service is not for browsers of other sites", async () => {
    const { app } = setup();
    const response = await app.request("/v1/agent/execute", preflight(APP));
    // Refused as any request without a key is: no route answers OPTIONS.
    expect(response.status).toBe(401);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("lets a listed origin's pages into local mode, and still refuses other sites' pages", async () => {
    const { app } = setup({ apiKeys: new Map(), corsOrigins: [APP] });
    const listed = await app.request(
      "/v1/sessions/s",
      { headers: { host: "127.0.0.1:8787", origin: APP } },
      LOOPBACK,
    );
    // Past the local-mode check: the session is unknown, not the caller.
    expect(listed.status).toBe(404);
    expect(listed.headers.get("access-control-allow-origin")).toBe(APP);
    const other = await app.request(
      "/v1/sessions/s",
      { headers: { host: "127.0.0.1:8787", origin: "https://evil.example" } },
      LOOPBACK,
    );
    expect(other.status).toBe(403);
    const body = (await other.json()) as { errors: Array<{ message: string }> };
    expect(body.errors[0]?.message).toContain("neither of this machine nor of APTIX_CORS_ORIGINS");
  });
});
