import { isStoreUnavailable, StoreUnavailableError } from "@aptix/core";
import { newSessionKey } from "@aptix/core/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../src/index.js";
import { reportingUnavailability } from "../src/store-unavailable.js";

/** A driver error as postgres.js makes them: a message and a `code` (a socket error's, its own, or a SQLSTATE). */
function driverError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** A store whose one method fails with `error`, seen through reportingUnavailability. */
function failingWith(error: unknown, closed = false) {
  const store = {
    async read(): Promise<never> {
      throw error;
    },
  };
  return reportingUnavailability(store, () => closed);
}

// The process's first `memory://` store runs PGlite's initdb (seconds of CPU, minutes on a busy two-core machine),
// the next ones load its result, seconds more. Opening a store is PGlite's work, which ends (initdb in a child
// process, migrations in this one), succeeding or failing: the hook and the tests that open one have no time limit.
const OPENS_A_STORE = { timeout: 0 };

beforeAll(async () => {
  await (await openStore("memory://")).close();
}, 0);

describe("reportingUnavailability", () => {
  it.each([
    ["a refused connection", driverError("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED")],
    ["a dropped connection", driverError("write CONNECTION_CLOSED 127.0.0.1:5432", "CONNECTION_CLOSED")],
    ["a connect timeout", driverError("write CONNECT_TIMEOUT 127.0.0.1:5432", "CONNECT_TIMEOUT")],
    ["pg_terminate_backend", driverError("terminating connection due to administrator command", "57P01")],
    ["a connection exception", driverError("connection failure", "08006")],
    [
      "drizzle's wrapper of a driver error",
      new Error("Failed query: select 1", {
        cause: driverError("connect ECONNREFUSED ::1:5432", "ECONNREFUSED"),
      }),
    ],
    [
      "a connection tried on several addresses",
      new AggregateError([driverError("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")], "connect failed"),
    ],
  ])("throws StoreUnavailableError for %s, keeping the driver's error as its cause", async (_, error) => {
    const thrown = await failingWith(error)
      .read()
      .catch((caught: unknown) => caught);
    expect(thrown).toBeInstanceOf(StoreUnavailableError);
    expect(isStoreUnavailable(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(/^The database cannot be reached: /);
    expect((thrown as Error).cause).toBe(error);
  });

  it("lets any other error through unchanged", async () => {
    for (const error of [
      driverError('duplicate key value violates unique constraint "turns_pkey"', "23505"),
      new Error("Failed query", { cause: driverError("invalid input syntax", "22P02") }),
      new TypeError("a bug"),
    ]) {
      expect(
        await failingWith(error)
          .read()
          .catch((caught: unknown) => caught),
      ).toBe(error);
    }
  });

  it("reports any failure of a closed store as StoreUnavailableError", async () => {
    const thrown = await failingWith(new Error("PGlite is closed"), true)
      .read()
      .catch((caught: unknown) => caught);
    expect(thrown).toBeInstanceOf(StoreUnavailableError);
    expect((thrown as Error).message).toBe("The store is closed.");
  });
});

describe("the calls in flight (the pool-in-use gauge)", () => {
  it("counts each asynchronous call until it settles, failed ones included", async () => {
    const inFlight = { count: 0 };
    const gates: Array<() => void> = [];
    const store = reportingUnavailability(
      {
        async wait(fails: boolean): Promise<void> {
          await new Promise<void>((resolve) => gates.push(resolve));
          if (fails) throw new TypeError("a bug");
        },
        name: () => "sync",
      },
      () => false,
      inFlight,
    );
    const passing = store.wait(false);
    const failing = store.wait(true).catch((error: unknown) => error);
    expect(store.name()).toBe("sync");
    expect(inFlight.count).toBe(2);
    for (const open of gates) open();
    await passing;
    expect(await failing).toBeInstanceOf(TypeError);
    expect(inFlight.count).toBe(0);
  });

  it(
    "answers no busy connection for an idle store, at most its pool's one on PGlite",
    OPENS_A_STORE,
    async () => {
      const store = await openStore("memory://");
      try {
        expect(store.poolInUse()).toBe(0);
        const reads = [1, 2, 3].map(() => store.sessions.directory.getSession(newSessionKey()));
        expect(store.poolInUse()).toBe(1);
        await Promise.all(reads);
        expect(store.poolInUse()).toBe(0);
      } finally {
        await store.close();
      }
    },
  );
});

describe("a store opened by openStore", OPENS_A_STORE, () => {
  it("throws StoreUnavailableError from every store once closed", async () => {
    const store = await openStore("memory://");
    const key = newSessionKey();
    expect(await store.sessions.directory.getSession(key)).toBeUndefined();
    await store.close();
    for (const read of [
      () => store.sessions.directory.getSession(key),
      () => store.files.get(key.principal, "file-1"),
      () => store.events.list(key, "turn-1", 0, -1),
      () => store.workspaceIndex.getWorkspace({ principal: key.principal, workspaceId: "workspace-1" }),
    ]) {
      await expect(read()).rejects.toBeInstanceOf(StoreUnavailableError);
    }
  });
});
