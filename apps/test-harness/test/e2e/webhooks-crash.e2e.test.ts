/**
 * Webhook deliveries outlive the instance that was making them. On both stores, a delivery refused once is made
 * by a new instance after the first was killed (SIGKILL). On Postgres, two instances run turns and deliver while
 * one is killed mid-delivery and started again, while sessions hold turns queued through both: every turn ends once,
 * each queued turn is asked of the provider once and in the order it was sent, every turn's last event arrives,
 * and no webhook id ever carries two bodies (a delivery may come twice, under its one id). The turns are
 * `CHAOS_SCENARIOS`: a new kind of turn is one more entry.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type RecordedRequest,
  type ScriptedOpenAI,
  startScriptedOpenAI,
  step,
} from "@aptix/testing-llm-servers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  databaseFor,
  documentedWebhookVerification,
  E2E_CATALOG,
  e2eServerEnv,
  expectFinal,
  type ReceivedWebhook,
  type ServerProcess,
  type ServiceClient,
  serviceClient,
  spawnServer,
  startWebhookReceiver,
  type TestDatabase,
  type TestStoreKind,
  uniqueId,
  userTurn,
  type WebhookReceiver,
  waitFor,
  writeCatalog,
} from "../../src/e2e/index.js";

// Child processes compile the server with tsx: on two busy cores that has taken over 30 s. A claim held by a
// killed instance expires after 30 s before another takes its deliveries.
const startTimeoutMs = 90_000;
vi.setConfig({ testTimeout: 300_000, hookTimeout: startTimeoutMs + 60_000 });

/** Short, so turns the killed instance ran are failed by the other within seconds. */
const LEASE_MS = 2_000;

interface EventBody {
  type: string;
  data: { principal: string; sessionId: string; turnId?: string; status?: string };
}

const bodyOf = (delivery: ReceivedWebhook) => JSON.parse(delivery.body) as EventBody;

/** The environment of an instance delivering to `receiver` on `database` (its DATABASE_URL replaced when given). */
async function instanceEnv(receiver: WebhookReceiver, database: TestDatabase, databaseUrl?: string) {
  const config = await writeCatalog({
    ...E2E_CATALOG,
    webhooks: [{ url: receiver.url, secretEnv: "HOOK_SECRET" }],
  });
  return {
    ...(await e2eServerEnv(database)),
    ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
    APTIX_CONFIG: config,
    APTIX_WEBHOOK_ALLOW_PRIVATE: "1",
    HOOK_SECRET: receiver.secret,
    APTIX_LEASE_MS: String(LEASE_MS),
    OPENAI_API_KEY: "test",
  };
}

/**
 * Each delivery signed with the receiver's secret, and each id's bodies: a delivery made twice is the same id with
 * the same body, never another.
 */
async function expectOneBodyPerId(receiver: WebhookReceiver): Promise<void> {
  const verify = await documentedWebhookVerification();
  const bodies = new Map<string, Set<string>>();
  for (const delivery of receiver.received) {
    expect(verify(receiver.secret, delivery.headers, delivery.body)).toBe(true);
    bodies.set(delivery.id, (bodies.get(delivery.id) ?? new Set()).add(delivery.body));
  }
  expect([...bodies.entries()].filter(([, each]) => each.size > 1)).toEqual([]);
}

describe.each(["pglite", "postgres"] as TestStoreKind[])("%s store, an instance killed", (store) => {
  let harness: ScriptedOpenAI;
  let receiver: WebhookReceiver;
  let database: TestDatabase;
  let directory: string | undefined;
  const instances: ServerProcess[] = [];

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    receiver = await startWebhookReceiver();
    database = await databaseFor(store);
  });

  afterAll(async () => {
    for (const instance of instances) await instance.kill();
    await database?.dispose();
    if (directory) await rm(directory, { recursive: true, force: true });
    await receiver?.close();
    await harness?.close();
  });

  it("leaves a delivery it could not make to the instance started after it, under the same id and body", async () => {
    // PGlite on disk: the database the next instance opens is the killed one's.
    directory = store === "pglite" ? await mkdtemp(join(tmpdir(), "aptix-e2e-hooks-")) : undefined;
    const env = {
      ...(await instanceEnv(receiver, database, directory)),
      OPENAI_BASE_URL: harness.baseUrl,
    };
    const sessionId = uniqueId("hook-restart");
    receiver.answer = () => 503;
    const first = await spawnServer({ env, startTimeoutMs });
    instances.push(first);
    harness.script(step.text("Kept."));
    expectFinal(await serviceClient(first.url).post(userTurn(sessionId, "t1", "Hello.")));
    await waitFor(() => receiver.received.length >= 1, "the refused attempt", 30_000);
    await first.kill();

    receiver.answer = () => 200;
    const second = await spawnServer({ env, startTimeoutMs });
    instances.push(second);
    await waitFor(
      () => receiver.received.some((delivery) => delivery.answered === 200),
      "the delivery from the new instance",
      60_000,
    );
    const [refused, delivered] = receiver.received;
    expect(refused?.answered).toBe(503);
    expect(delivered?.id).toBe(refused?.id);
    expect(delivered?.body).toBe(refused?.body);
    expect(bodyOf(delivered as ReceivedWebhook)).toMatchObject({
      type: "turn.completed",
      data: { sessionId, turnId: "t1", status: "completed" },
    });
    await expectOneBodyPerId(receiver);

    // Stopped (SIGTERM) while a delivery is under way: it waits for the answer and records it, then exits.
    const slow = uniqueId("hook-sigterm");
    receiver.answer = async (request) => {
      if (request.body.includes(slow)) await new Promise((resolve) => setTimeout(resolve, 1_000));
      return 200;
    };
    harness.script(step.text("Kept too."));
    expectFinal(await serviceClient(second.url).post(userTurn(slow, "t1", "Hello.")));
    await waitFor(() => receiver.answering > 0, "the delivery under way", 30_000);
    const exit = await second.stop("SIGTERM");
    expect(exit.code).toBe(0);
    const ofSlow = receiver.received.filter((delivery) => delivery.body.includes(slow));
    expect(ofSlow.map((delivery) => delivery.answered)).toEqual([200]);
    expect(second.logs.some((line) => line.message === "stopped")).toBe(true);
  });
});

/** A kind of turn the chaos test runs: started through `client`, ending on its own (no client needed). */
interface ChaosScenario {
  name: string;
  start(client: ServiceClient, sessionId: string): Promise<unknown>;
}

/** The turns the chaos test runs on each instance, each in a session of its own. */
const CHAOS_SCENARIOS: readonly ChaosScenario[] = [
  { name: "a plain turn", start: (client, sessionId) => client.post(userTurn(sessionId, "t1", "Chaos.")) },
  {
    name: "a turn that waits for client tools",
    start: (client, sessionId) => client.post(userTurn(sessionId, "t1", "Read the file.")),
  },
];

/** How many sessions of each scenario each instance starts. */
const ROUNDS = 3;

/** Sessions whose first turn runs while more wait queued behind it, and how many turns each holds. */
const QUEUE_SESSIONS = 4;
const QUEUE_TURNS = 4;

/** The instruction of a queued session's turn: the request asking it is known by its last such mark. */
const queueMark = (sessionId: string, turnId: string) => `[queue ${sessionId} ${turnId}]`;
const QUEUE_MARK = /\[queue (\S+) (t\d+)\]/g;

/** The queued session's turn a provider request runs: the last mark of its body (earlier ones are history). */
function queueTurnOf(request: RecordedRequest): { sessionId: string; turnId: string } | undefined {
  const marks = [...JSON.stringify(request.body).matchAll(QUEUE_MARK)];
  const last = marks.at(-1);
  return last === undefined ? undefined : { sessionId: last[1] as string, turnId: last[2] as string };
}

/** A session's turns as the service holds them at the end: id, status and error code. */
interface EndedTurn {
  turnId: string;
  status: string;
  code: string | null;
}

describe("postgres store, two instances delivering and running queued turns, one killed (SIGKILL) and started again", () => {
  let harness: ScriptedOpenAI;
  let receiver: WebhookReceiver;
  let database: TestDatabase;
  const instances: ServerProcess[] = [];

  /**
   * The model: slow, so turns are running when the kill comes (a queued session's first turn slowest, so the
   * turns behind it are still queued then); tools for the turns that ask for a file.
   */
  const model = (request: RecordedRequest) => {
    const queued = queueTurnOf(request);
    if (queued !== undefined) {
      return step.text(`Answer to ${queueMark(queued.sessionId, queued.turnId)}`, {
        delayMs: queued.turnId === "t1" ? 5_000 : 300,
      });
    }
    const asked = JSON.stringify(request.body).includes("Read the file.");
    return asked
      ? step.functionCalls([{ name: "read_file", callId: "call_1", arguments: { path: "a.txt" } }], {
          delayMs: 300,
        })
      : step.text("Chaos handled.", { delayMs: 300 });
  };

  beforeAll(async () => {
    harness = await startScriptedOpenAI();
    receiver = await startWebhookReceiver();
    database = await databaseFor("postgres");
  });

  afterAll(async () => {
    for (const instance of instances) await instance.kill();
    await database?.dispose();
    await receiver?.close();
    await harness?.close();
  });

  /**
   * Starts each queued session: its first turn in the background, then the others enqueued one after the other,
   * through both instances in turn; each is stored when its 202 comes, so the order they were sent is theirs.
   */
  async function startQueues(through: readonly ServerProcess[]): Promise<string[]> {
    const sessions = Array.from({ length: QUEUE_SESSIONS }, () => uniqueId("chaos-queue"));
    await Promise.all(
      sessions.map(async (sessionId, index) => {
        for (let turn = 1; turn <= QUEUE_TURNS; turn++) {
          const via = serviceClient((through[(index + turn) % through.length] as ServerProcess).url);
          const turnId = `t${turn}`;
          const body = userTurn(sessionId, turnId, queueMark(sessionId, turnId), {
            background: true,
            ...(turn > 1 ? { multitask: "enqueue" } : {}),
          });
          expect((await via.send("POST", "/v1/agent/execute", body)).status).toBe(202);
        }
      }),
    );
    return sessions;
  }

  /**
   * Reads every session until none of its turns is running or queued: its turns then, or none for a session the
   * killed instance never stored.
   */
  async function untilEnded(client: ServiceClient, sessions: readonly string[]) {
    const ended = new Map<string, EndedTurn[]>();
    const deadline = Date.now() + 120_000;
    while (ended.size < sessions.length) {
      if (Date.now() > deadline) {
        throw new Error(`sessions still running: ${sessions.filter((id) => !ended.has(id)).join(", ")}`);
      }
      for (const sessionId of sessions.filter((id) => !ended.has(id))) {
        const summary = await client.session(sessionId);
        if (summary.status === 404) ended.set(sessionId, []);
        if (!summary.body.successful) continue;
        const turns = summary.body.result.turns.map((turn) => ({
          turnId: turn.turnId,
          status: turn.status,
          code: turn.error?.code ?? null,
        }));
        if (turns.every((turn) => turn.status !== "running" && turn.status !== "queued")) {
          ended.set(sessionId, turns);
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return ended;
  }

  it("ends every turn once, runs each queued turn once and in order, and delivers every turn's last event under one body per id", async () => {
    const env = { ...(await instanceEnv(receiver, database)), OPENAI_BASE_URL: harness.baseUrl };
    const [doomed, survivor] = await Promise.all([
      spawnServer({ env, startTimeoutMs }),
      spawnServer({ env, startTimeoutMs }),
    ]);
    instances.push(doomed, survivor);
    // Slow, and refusing the first attempt of every third delivery: deliveries are in flight and due again when
    // the kill comes (a delivery refused once comes again 5 s later; refused twice, it would wait 30 s more).
    const attempted = new Set<string>();
    receiver.answer = async (request) => {
      const refused = !attempted.has(request.id) && attempted.size % 3 === 2;
      attempted.add(request.id);
      await new Promise((resolve) => setTimeout(resolve, 150));
      return refused ? 500 : 200;
    };

    const turns = 2 * ROUNDS * CHAOS_SCENARIOS.length + QUEUE_SESSIONS * QUEUE_TURNS;
    harness.script(...Array.from({ length: turns }, () => model));
    const queues = await startQueues([doomed, survivor]);
    const sessions: string[] = [];
    const started: Promise<unknown>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const scenario of CHAOS_SCENARIOS) {
        for (const instance of [doomed, survivor]) {
          const sessionId = uniqueId(`chaos-${scenario.name.replaceAll(" ", "-")}`);
          sessions.push(sessionId);
          started.push(scenario.start(serviceClient(instance.url), sessionId).catch(() => undefined));
        }
      }
    }
    // The kill comes with deliveries under way and every queued session's first turn asking the provider, the
    // turns behind it queued.
    const firstsAsked = () =>
      harness.responseRequests().filter((request) => queueTurnOf(request)?.turnId === "t1").length;
    await waitFor(() => firstsAsked() >= QUEUE_SESSIONS, "the queued sessions' first calls", 60_000);
    await waitFor(() => receiver.received.length >= 2, "deliveries under way", 60_000);
    await doomed.kill();
    const restarted = await spawnServer({ env, startTimeoutMs });
    instances.push(restarted);
    await Promise.all(started);

    // Every turn ends (the killed instance's running ones failed by the others once their lease expired).
    const ended = await untilEnded(serviceClient(survivor.url), [...sessions, ...queues]);
    // A session the killed instance never stored has no turn, and so no event: it is not counted.
    expect([...ended.values()].filter((each) => each.length > 0).length).toBeGreaterThanOrEqual(
      ROUNDS * CHAOS_SCENARIOS.length + QUEUE_SESSIONS,
    );
    expectQueuesRanOnce(harness, queues, ended);
    // The killed instance's first turns failed with the turns queued behind them run by the others.
    const behindKilled = queues.filter((sessionId) => {
      const [first, ...queued] = ended.get(sessionId) ?? [];
      return first?.code === "TURN_INTERRUPTED" && queued.every((turn) => turn.status === "completed");
    });
    expect(behindKilled.length).toBeGreaterThan(0);

    // Each ended turn's event is delivered.
    const delivered = (sessionId: string, turn: EndedTurn) =>
      receiver.received.some((delivery) => {
        const { type, data } = bodyOf(delivery);
        return (
          delivery.answered === 200 &&
          type === `turn.${turn.status}` &&
          data.sessionId === sessionId &&
          data.turnId === turn.turnId
        );
      });
    await waitFor(
      () => [...ended].every(([sessionId, each]) => each.every((turn) => delivered(sessionId, turn))),
      "every ended turn's event",
      150_000,
    );
    await expectOneBodyPerId(receiver);
    // One event per turn and status: written once, with its transition; and one end per turn.
    const events = new Map<string, Set<string>>();
    const ends = new Map<string, Set<string>>();
    for (const delivery of receiver.received) {
      const { type, data } = bodyOf(delivery);
      const key = `${data.sessionId}/${data.turnId}/${type}`;
      events.set(key, (events.get(key) ?? new Set()).add(delivery.id));
      if (type === "turn.awaiting_client_tools") continue;
      const turn = `${data.sessionId}/${data.turnId}`;
      ends.set(turn, (ends.get(turn) ?? new Set()).add(type));
    }
    expect([...events.entries()].filter(([, ids]) => ids.size > 1)).toEqual([]);
    expect([...ends.entries()].filter(([, types]) => types.size > 1)).toEqual([]);
    harness.reset();
  });
});

/**
 * Each queued session's turns: all stored, each completed, or failed as interrupted (the killed instance ran it);
 * none asked of the provider twice, a completed one once; and asked in the order they were sent.
 */
function expectQueuesRanOnce(
  harness: ScriptedOpenAI,
  queues: readonly string[],
  ended: ReadonlyMap<string, EndedTurn[]>,
): void {
  const asked = harness.responseRequests().flatMap((request) => queueTurnOf(request) ?? []);
  for (const sessionId of queues) {
    const turns = ended.get(sessionId) ?? [];
    expect(turns.map((turn) => turn.turnId)).toEqual(
      Array.from({ length: QUEUE_TURNS }, (_, index) => `t${index + 1}`),
    );
    const order = asked.filter((each) => each.sessionId === sessionId).map((each) => each.turnId);
    for (const turn of turns) {
      const calls = order.filter((turnId) => turnId === turn.turnId).length;
      if (turn.status === "completed") expect(calls, `${sessionId} ${turn.turnId}`).toBe(1);
      else {
        expect([turn.status, turn.code]).toEqual(["failed", "TURN_INTERRUPTED"]);
        expect(calls, `${sessionId} ${turn.turnId}`).toBeLessThanOrEqual(1);
      }
    }
    expect(order).toEqual([...order].sort());
  }
}
