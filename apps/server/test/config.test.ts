import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defaultClientTools } from "@aptix/contracts";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config/config-error.js";
import { DEFAULT_CATALOG } from "../src/config/default-catalog.js";
import { loadCatalog } from "../src/config/load-catalog.js";
import { readServerEnv, type ServerEnv } from "../src/config/server-env.js";
import { cacheKeySecretFromEnv } from "../src/wiring/cache-key-secret-from-env.js";

function configFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "aptix-config-")), "config.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

async function configError(path: string): Promise<string> {
  const error = await loadCatalog(path).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

describe("the APTIX_CONFIG file", () => {
  it("loads the built-in default when unset", async () => {
    const { catalog, source } = await loadCatalog(undefined);
    expect(source).toBe("built-in default config");
    expect(catalog.modes.ids).toEqual(["general"]);
    expect(catalog.toolsFor(catalog.modes.get("general")).map((tool) => tool.name)).toEqual([
      "read_file",
      "list_files",
      "search_files",
      "apply_patch",
      "agent_change_mode",
    ]);
  });

  it("offers exactly the client tools the aptix terminal client runs, as contracts define them", async () => {
    const { catalog } = await loadCatalog(undefined);
    const offered = catalog.toolsFor(catalog.modes.get("general"));
    expect(offered.filter((tool) => tool.name !== "agent_change_mode")).toEqual(
      defaultClientTools.map((tool) => expect.objectContaining({ ...tool })),
    );
  });

  it("names an unknown key, a wrong type and a missing field", async () => {
    const message = await configError(
      configFile({
        ...DEFAULT_CATALOG,
        modes: [{ ...DEFAULT_CATALOG.modes[0], colour: "blue", tools: "read_file" }],
        conversationContexts: [{ id: "default", model: "m", provider: "openai" }],
      }),
    );
    expect(message).toContain("modes[0].colour: is not a known key");
    expect(message).toContain("modes[0].tools:");
    expect(message).toContain("conversationContexts[0].bootPrompt:");
  });

  it("says which known key a misspelt one looks like, and nothing for one like none", async () => {
    const message = await configError(
      configFile({
        ...DEFAULT_CATALOG,
        modse: [],
        conversationContexts: [
          { ...DEFAULT_CATALOG.conversationContexts[0], bootPromt: "x", colour: "blue" },
        ],
      }),
    );
    expect(message).toContain('modse: is not a known key (did you mean "modes"?)');
    expect(message).toContain(
      'conversationContexts[0].bootPromt: is not a known key (did you mean "bootPrompt"?)',
    );
    expect(message).toMatch(/conversationContexts\[0\]\.colour: is not a known key$/m);
  });

  it("takes a context's retrieval bounds and the embeddings model, and names bad ones", async () => {
    const context = {
      ...DEFAULT_CATALOG.conversationContexts[0],
      retrieval: { topK: 4, maxContextTokens: 2000 },
    };
    const embeddings = { provider: "openai", model: "text-embedding-3-small", batchSize: 32 };
    const { catalog, config } = await loadCatalog(
      configFile({ ...DEFAULT_CATALOG, conversationContexts: [context], embeddings }),
    );
    expect(catalog.conversationContext("default")?.retrieval).toEqual({ topK: 4, maxContextTokens: 2000 });
    expect(config.embeddings).toEqual(embeddings);
    const message = await configError(
      configFile({
        ...DEFAULT_CATALOG,
        conversationContexts: [{ ...context, retrieval: { topK: 0, window: 3 } }],
        embeddings: { provider: "anthropic", model: "" },
      }),
    );
    expect(message).toContain("conversationContexts[0].retrieval.topK:");
    expect(message).toContain("conversationContexts[0].retrieval.window: is not a known key");
    expect(message).toContain("embeddings.provider:");
    expect(message).toContain("embeddings.model:");
  });

  it("takes prices and budgets, and names a bad price or budget field", async () => {
    const prices = { "gpt-5.1": { inputPerMTok: 1, cachedInputPerMTok: 0.1, outputPerMTok: 8 } };
    const budgets = { alice: { usdMonthly: 25, tokensDaily: 1_000_000 } };
    const { config } = await loadCatalog(configFile({ prices, budgets }));
    expect(config.prices).toEqual(prices);
    expect(config.budgets).toEqual(budgets);
    const message = await configError(
      configFile({
        prices: {
          "gpt-*-mini*": { inputPerMTok: 1, cachedInputPerMTok: 1, outputPerMTok: 1 },
          m: { inputPerMTok: -1 },
        },
        budgets: { bob: { tokensDaily: 1.5, usd: 3 } },
      }),
    );
    expect(message).toContain("prices.gpt-*-mini*:");
    expect(message).toContain("prices.m.inputPerMTok:");
    expect(message).toContain("prices.m.outputPerMTok:");
    expect(message).toContain("budgets.bob.tokensDaily:");
    expect(message).toContain("budgets.bob.usd: is not a known key");
  });

  it("names a reference to a mode or tool that does not exist", async () => {
    const message = await configError(
      configFile({
        ...DEFAULT_CATALOG,
        conversationContexts: [{ ...DEFAULT_CATALOG.conversationContexts[0], defaultMode: "planning" }],
        modes: [
          { ...DEFAULT_CATALOG.modes[0], tools: ["read_file", "run_tests"], toolChoice: "apply_patch" },
        ],
      }),
    );
    expect(message).toContain('conversationContexts[0].defaultMode: names the mode "planning"');
    expect(message).toContain('modes[0].tools[1]: names "run_tests"');
    expect(message).toContain('modes[0].toolChoice: names "apply_patch"');
  });

  it("names a provider the server has no adapter for", async () => {
    const message = await configError(
      configFile({
        ...DEFAULT_CATALOG,
        conversationContexts: [{ ...DEFAULT_CATALOG.conversationContexts[0], provider: "opnai" }],
      }),
    );
    expect(message).toContain(
      'conversationContexts[0].provider: "opnai" is not a provider this server has (openai, anthropic)',
    );
  });

  it("checks the built-in default against the providers the server was given", async () => {
    const error = await loadCatalog(undefined, ["scripted"]).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain(
      'built-in default config is invalid:\n  conversationContexts[0].provider: "openai" is not a provider this server has (scripted)',
    );
  });

  it("says when the file is missing or not JSON", async () => {
    expect(await configError("/nonexistent/aptix.json")).toContain("cannot read /nonexistent/aptix.json");
    expect(await configError(configFile("{ not json"))).toContain("is not JSON");
  });
});

describe("a partial APTIX_CONFIG file", () => {
  const coder = {
    id: "coder",
    bootPrompt: "You write code.",
    model: "gpt-4.1",
    provider: "openai",
    defaultMode: "general",
  };

  it("takes each top-level key it leaves out from the built-in default, and replaces each one it gives whole", async () => {
    const { catalog, config } = await loadCatalog(configFile({ conversationContexts: [coder] }));
    expect(config.conversationContexts).toEqual([coder]);
    expect(config.modes).toEqual(DEFAULT_CATALOG.modes);
    expect(config.clientTools).toEqual(DEFAULT_CATALOG.clientTools);
    expect(catalog.conversationContext("default")).toBeUndefined();
    expect(catalog.conversationContext(undefined)?.model).toBe("gpt-4.1");

    const mcpOnly = await loadCatalog(configFile({ files: { ttlSeconds: 60 } }));
    expect(mcpOnly.config).toEqual({ ...DEFAULT_CATALOG, files: { ttlSeconds: 60 } });
    expect(mcpOnly.source).toMatch(/config\.json$/);
  });

  it("names the references a replaced key breaks in the default's other keys", async () => {
    const message = await configError(configFile({ clientTools: [] }));
    expect(message).toContain('modes[0].tools[0]: names "read_file"');
  });

  it("must hold a JSON object", async () => {
    expect(await configError(configFile("[]"))).toMatch(/config\.json must hold a JSON object$/);
    expect(await configError(configFile("null"))).toMatch(/must hold a JSON object$/);
  });
});

describe("APTIX_MODEL and APTIX_PROVIDER", () => {
  const defaultContext = async (override: { model?: string; provider?: string }, path?: string) =>
    (await loadCatalog(path, undefined, undefined, override)).config.conversationContexts[0];

  it("set the default conversation context's model and provider, with or without a file", async () => {
    expect(await defaultContext({ model: "gpt-4.1-mini" })).toMatchObject({
      id: "default",
      model: "gpt-4.1-mini",
      provider: "openai",
    });
    expect(await defaultContext({ model: "claude-sonnet-4-5", provider: "anthropic" })).toMatchObject({
      model: "claude-sonnet-4-5",
      provider: "anthropic",
    });
    const file = configFile({
      conversationContexts: [
        { ...DEFAULT_CATALOG.conversationContexts[0], id: "first" },
        { ...DEFAULT_CATALOG.conversationContexts[0], id: "second" },
      ],
    });
    const { config } = await loadCatalog(file, undefined, undefined, { model: "o4-mini" });
    expect(config.conversationContexts.map((context) => [context.id, context.model])).toEqual([
      ["first", "o4-mini"],
      ["second", "gpt-5.1"],
    ]);
  });

  it("name a provider the server has not, and a new provider without a model", async () => {
    const refused = async (override: { model?: string; provider?: string }) =>
      loadCatalog(undefined, undefined, undefined, override).then(
        () => "",
        (error: unknown) => (error instanceof ConfigError ? error.message : String(error)),
      );
    expect(await refused({ provider: "azure", model: "gpt-4.1" })).toBe(
      'APTIX_PROVIDER: "azure" is not a provider this server has (openai, anthropic)',
    );
    expect(await refused({ provider: "anthropic" })).toBe(
      'APTIX_PROVIDER: anthropic needs APTIX_MODEL too: the default context\'s model "gpt-5.1" is for the provider openai',
    );
    expect(await refused({ provider: "openai" })).toBe("");
  });
});

describe("a config error", () => {
  it("is told as one line per bad key, in the order of their paths, each saying which file it is of", async () => {
    const path = configFile({
      modes: [{ ...DEFAULT_CATALOG.modes[0], colour: "blue", tools: "read_file" }],
      conversationContexts: [{ id: "default", model: "m", provider: "openai" }],
    });
    const error = await loadCatalog(path).then(
      () => undefined,
      (thrown: unknown) => thrown as ConfigError,
    );
    expect(error?.lines).toEqual([
      `APTIX_CONFIG: ${path} is invalid: conversationContexts[0].bootPrompt: Invalid input: expected string, received undefined`,
      `APTIX_CONFIG: ${path} is invalid: modes[0].colour: is not a known key`,
      `APTIX_CONFIG: ${path} is invalid: modes[0].tools: Invalid input: expected array, received string`,
    ]);
  });
});

describe("the environment", () => {
  it("applies the defaults of docs/configuration.md", () => {
    const env = readServerEnv({});
    expect([env.PORT, env.HOST, env.apiKeys.size]).toEqual([8787, "127.0.0.1", 0]);
    // ./.aptix/db, from where the command was run.
    expect(env.DATABASE_URL).toBe(resolve(process.cwd(), ".aptix/db"));
  });

  it("keeps an embedded database where the command was run, and URLs as they are", () => {
    expect(readServerEnv({ INIT_CWD: "/srv/aptix" }).DATABASE_URL).toBe("/srv/aptix/.aptix/db");
    expect(readServerEnv({ INIT_CWD: "/srv/aptix", DATABASE_URL: "/var/lib/aptix" }).DATABASE_URL).toBe(
      "/var/lib/aptix",
    );
    expect(readServerEnv({ DATABASE_URL: "memory://" }).DATABASE_URL).toBe("memory://");
    expect(readServerEnv({ DATABASE_URL: "postgres://db:5432/aptix" }).DATABASE_URL).toBe(
      "postgres://db:5432/aptix",
    );
  });

  it("names a bad variable", () => {
    expect(() => readServerEnv({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => readServerEnv({ APTIX_MAX_LLM_CALLS: "0" })).toThrow(/APTIX_MAX_LLM_CALLS/);
    expect(() => readServerEnv({ APTIX_PGLITE_SHARED_BUFFERS: "16" })).toThrow(/APTIX_PGLITE_SHARED_BUFFERS/);
    expect(readServerEnv({ APTIX_PGLITE_SHARED_BUFFERS: "64MB" }).APTIX_PGLITE_SHARED_BUFFERS).toBe("64MB");
  });

  it("reads the retentions in whole days (sessions kept, traces 30 days by default), and stops start-up naming a bad one", () => {
    expect(readServerEnv({}).APTIX_SESSION_RETENTION_DAYS).toBeUndefined();
    expect(readServerEnv({}).APTIX_TRACE_RETENTION_DAYS).toBe(30);
    expect(readServerEnv({ APTIX_SESSION_RETENTION_DAYS: "90" }).APTIX_SESSION_RETENTION_DAYS).toBe(90);
    for (const name of ["APTIX_SESSION_RETENTION_DAYS", "APTIX_TRACE_RETENTION_DAYS"]) {
      for (const bad of ["0", "-1", "1.5", "forever", ""]) {
        expect(() => readServerEnv({ [name]: bad })).toThrow(
          `${name}=${JSON.stringify(bad)}: must be a whole number of days`,
        );
      }
    }
  });

  it("reads APTIX_RATE_LIMIT_RPM, 600 by default, and stops start-up naming a bad one", () => {
    expect(readServerEnv({}).APTIX_RATE_LIMIT_RPM).toBe(600);
    expect(readServerEnv({ APTIX_RATE_LIMIT_RPM: "30" }).APTIX_RATE_LIMIT_RPM).toBe(30);
    for (const bad of ["0", "-5", "2.5", "lots", "1000001"]) {
      // The value as given, not what coercing made of it ("received NaN").
      expect(() => readServerEnv({ APTIX_RATE_LIMIT_RPM: bad })).toThrow(
        `APTIX_RATE_LIMIT_RPM=${JSON.stringify(bad)}: must be a whole number from 1 to 1000000`,
      );
    }
    // Cut, so a value pasted by mistake does not flood the log.
    expect(() => readServerEnv({ APTIX_RATE_LIMIT_RPM: "x".repeat(100) })).toThrow(
      `APTIX_RATE_LIMIT_RPM="${"x".repeat(40)}…": must be`,
    );
    // A secret is named, never echoed.
    expect(() => readServerEnv({ APTIX_METRICS_TOKEN: "short-secret" })).toThrow(
      /^Invalid environment:\n {2}APTIX_METRICS_TOKEN: must be at least 16 characters$/,
    );
    expect(() => readServerEnv({ APTIX_CACHE_KEY_SECRET: "too-short-a-secret" })).toThrow(
      /^Invalid environment:\n {2}APTIX_CACHE_KEY_SECRET: must be at least 32 characters$/,
    );
  });

  it("takes the prompt-cache key's secret from APTIX_CACHE_KEY_SECRET, else the one the database keeps", async () => {
    const kept = new Uint8Array(32).fill(7);
    const store = {
      deploymentSecret: async (name: string) => (name === "prompt-cache-key" ? kept : new Uint8Array()),
    };
    const given = "a-deployment-secret-of-32-chars-or-more";
    expect(readServerEnv({}).APTIX_CACHE_KEY_SECRET).toBeUndefined();
    expect(await cacheKeySecretFromEnv(readServerEnv({ APTIX_CACHE_KEY_SECRET: given }), store)).toEqual(
      new TextEncoder().encode(given),
    );
    expect(await cacheKeySecretFromEnv(readServerEnv({}), store)).toBe(kept);
  });

  it("reads the per-principal limits, 16 running turns and 1 GiB each of documents and files by default, and names a bad one", () => {
    const limits = (env: ServerEnv) => [
      env.APTIX_MAX_RUNNING_TURNS,
      env.APTIX_QUOTA_WORKSPACE_BYTES,
      env.APTIX_QUOTA_FILE_BYTES,
    ];
    expect(limits(readServerEnv({}))).toEqual([16, 1024 ** 3, 1024 ** 3]);
    const set = readServerEnv({
      APTIX_MAX_RUNNING_TURNS: "2",
      APTIX_QUOTA_WORKSPACE_BYTES: "0",
      APTIX_QUOTA_FILE_BYTES: "5000000000",
    });
    expect(limits(set)).toEqual([2, 0, 5_000_000_000]);
    for (const [name, value] of [
      ["APTIX_MAX_RUNNING_TURNS", "0"],
      ["APTIX_MAX_RUNNING_TURNS", "many"],
      ["APTIX_QUOTA_WORKSPACE_BYTES", "1GB"],
      ["APTIX_QUOTA_FILE_BYTES", "-1"],
      ["APTIX_QUOTA_FILE_BYTES", "1.5"],
    ] as const) {
      expect(() => readServerEnv({ [name]: value })).toThrow(new RegExp(name));
    }
  });

  it("reads API keys and refuses malformed ones", () => {
    const env = readServerEnv({ APTIX_API_KEYS: "alice:alice-key-0123456789, bob:bob-key-0123456789ab" });
    expect([...env.apiKeys]).toEqual([
      ["alice-key-0123456789", "alice"],
      ["bob-key-0123456789ab", "bob"],
    ]);
    expect(() => readServerEnv({ APTIX_API_KEYS: "alice" })).toThrow(/entry 1 must be principal:key/);
    expect(() => readServerEnv({ APTIX_API_KEYS: "alice:short" })).toThrow(/at least 16 characters/);
    expect(() => readServerEnv({ APTIX_API_KEYS: "a:same-key-0123456789,b:same-key-0123456789" })).toThrow(
      /repeats/,
    );
  });

  it("reads APTIX_TRUSTED_PROXIES as CIDRs, a bare address as its /32 or /128, none when unset", () => {
    const keyed = { APTIX_API_KEYS: "alice:alice-key-0123456789" };
    expect(readServerEnv(keyed).APTIX_TRUSTED_PROXIES).toEqual([]);
    expect(
      readServerEnv({
        ...keyed,
        APTIX_TRUSTED_PROXIES: " 10.0.0.0/8, 127.0.0.1,,2001:db8::/32, ::1, 10.0.0.0/8",
      }).APTIX_TRUSTED_PROXIES,
    ).toEqual(["10.0.0.0/8", "127.0.0.1/32", "2001:db8::/32", "::1/128"]);
  });

  it.each([
    ["10.0.0.0/33", 'entry 1 "10.0.0.0/33"'],
    ["proxy.internal", 'entry 1 "proxy.internal"'],
    ["127.0.0.1,10.0.0.0/8/1", 'entry 2 "10.0.0.0/8/1"'],
    ["10.0.0/8", 'entry 1 "10.0.0/8"'],
    ["2001:db8::/129", 'entry 1 "2001:db8::/129"'],
    ["10.0.0.0/-1", 'entry 1 "10.0.0.0/-1"'],
    ["10.0.0.0/ 8", 'entry 1 "10.0.0.0/ 8"'],
    ["fe80::1%eth0", 'entry 1 "fe80::1%eth0"'],
    ["[::1]", 'entry 1 "[::1]"'],
    ["127.0.0.1:8080", 'entry 1 "127.0.0.1:8080"'],
  ])("stops start-up naming APTIX_TRUSTED_PROXIES and its bad entry for %s", (value, entry) => {
    const env = { APTIX_API_KEYS: "alice:alice-key-0123456789", APTIX_TRUSTED_PROXIES: value };
    expect(() => readServerEnv(env)).toThrow(
      `Invalid environment:\n  APTIX_TRUSTED_PROXIES=${JSON.stringify(value)}: ${entry} is not an IP address or CIDR such as 10.0.0.0/8, 127.0.0.1 or 2001:db8::/32`,
    );
  });

  it("refuses APTIX_TRUSTED_PROXIES in local mode, which refuses every forwarded request", () => {
    expect(() => readServerEnv({ APTIX_TRUSTED_PROXIES: "127.0.0.1" })).toThrow(
      "APTIX_TRUSTED_PROXIES is set, and APTIX_API_KEYS is unset: local mode refuses every forwarded request. Set APTIX_API_KEYS to serve through a proxy.",
    );
    // Empty is unset.
    expect(readServerEnv({ APTIX_TRUSTED_PROXIES: " , " }).APTIX_TRUSTED_PROXIES).toEqual([]);
  });

  it("stops start-up on an APTIX_ variable it does not read, with the one meant when it looks like a typo", () => {
    const lines = (env: NodeJS.ProcessEnv) =>
      (() => {
        try {
          readServerEnv(env);
        } catch (error) {
          return (error as ConfigError).lines;
        }
        return [];
      })();
    expect(lines({ APTIX_PORT: "abc" })).toEqual([
      'Invalid environment: APTIX_PORT: is not a variable the service reads (did you mean "PORT"?)',
    ]);
    expect(lines({ APTIX_MAX_LLM_CALL: "4", APTIX_SOMETHING: "x" })).toEqual([
      'Invalid environment: APTIX_MAX_LLM_CALL: is not a variable the service reads (did you mean "APTIX_MAX_LLM_CALLS"?)',
      "Invalid environment: APTIX_SOMETHING: is not a variable the service reads",
    ]);
    // Told with the other bad variables, in one start.
    expect(lines({ PORT: "eighty", APTIX_DEMOO: "1" })).toEqual([
      'Invalid environment: PORT="eighty": must be a whole number from 0 to 65535',
      'Invalid environment: APTIX_DEMOO: is not a variable the service reads (did you mean "APTIX_DEMO"?)',
    ]);
    // The terminal client's and the CI script's variables are someone else's, not typos.
    const others = { APTIX_URL: "http://127.0.0.1:8787", APTIX_API_KEY: "k", APTIX_CI_ISOLATED: "1" };
    expect(readServerEnv(others).PORT).toBe(8787);
  });

  it("stops start-up on a DATABASE_URL whose scheme is no database, never repeating the URL", () => {
    for (const [url, hint] of [
      [
        "postgress://aptix:hunter2@db/aptix",
        '"postgress:" is not a database URL this service opens (did you mean "postgres"?)',
      ],
      [
        "postgres:/db/aptix",
        '"postgres:" is not a database URL this service opens (did you mean "postgres://"?)',
      ],
      ["memroy://", '"memroy:" is not a database URL this service opens (did you mean "memory"?)'],
      ["mysql://db/aptix", '"mysql:" is not a database URL this service opens:'],
    ]) {
      let message = "";
      try {
        readServerEnv({ DATABASE_URL: url });
      } catch (error) {
        message = (error as ConfigError).message;
      }
      expect(message).toContain(`DATABASE_URL: ${hint}`);
      expect(message).toContain("use postgres://…, postgresql://…, memory:// or a directory path");
      expect(message).not.toContain("hunter2");
    }
    // A directory, relative or absolute (a Windows drive too), is still an embedded database.
    expect(readServerEnv({ DATABASE_URL: "data/db", INIT_CWD: "/srv" }).DATABASE_URL).toBe("/srv/data/db");
    expect(readServerEnv({ DATABASE_URL: "C:\\aptix\\db" }).DATABASE_URL).toContain("aptix");
    expect(readServerEnv({ DATABASE_URL: "postgresql://db/aptix" }).DATABASE_URL).toBe(
      "postgresql://db/aptix",
    );
    // The store reads Postgres's schemes in any case, so start-up does too.
    expect(readServerEnv({ DATABASE_URL: "POSTGRES://db/aptix" }).DATABASE_URL).toBe("POSTGRES://db/aptix");
  });

  it("reads APTIX_DEMO as on for 1 or true, off otherwise, and names a bad value", () => {
    expect(
      [undefined, "0", "false", "", "1", "true"].map((value) => readServerEnv({ APTIX_DEMO: value }).demo),
    ).toEqual([false, false, false, false, true, true]);
    expect(() => readServerEnv({ APTIX_DEMO: "yes" })).toThrow('APTIX_DEMO="yes": must be 1 (on) or 0 (off)');
    // Its own embedded database unless told another: a real model's start never replays the demo's answers.
    expect(readServerEnv({ APTIX_DEMO: "1", INIT_CWD: "/srv" }).DATABASE_URL).toBe("/srv/.aptix/demo-db");
    expect(readServerEnv({ APTIX_DEMO: "1", DATABASE_URL: "memory://" }).DATABASE_URL).toBe("memory://");
  });

  it("refuses local mode on a non-loopback address", () => {
    expect(() => readServerEnv({ HOST: "0.0.0.0" })).toThrow(/local mode serves loopback only/);
    expect(readServerEnv({ HOST: "0.0.0.0", APTIX_API_KEYS: "alice:alice-key-0123456789" }).HOST).toBe(
      "0.0.0.0",
    );
    expect(readServerEnv({ HOST: "::1" }).HOST).toBe("::1");
  });
});
