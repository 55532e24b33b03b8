import type { AddressInfo } from "node:net";
import { createAgentExecuteRequestValidator } from "@aptix/contracts";
import {
  AgentCatalog,
  AgentService,
  createCreateFileTool,
  randomIdGenerator,
  type ServerTool,
  sha256ContentHashService,
  WorkspaceKnowledge,
} from "@aptix/core";
import { InMemoryFileStore, InMemoryWorkspaceIndex, inMemorySessionStores } from "@aptix/core/testing";
import { OpenAIResponsesProvider } from "@aptix/llm-openai";
import { createApp, DEFAULT_CATALOG, silentLogger } from "@aptix/server";
import { type ScriptedOpenAI, startScriptedOpenAI } from "@aptix/testing-llm-servers";
import { serve } from "@hono/node-server";

/** The principal the tests call as, and its key. */
export const PRINCIPAL = "alice";
export const API_KEY = "alice-client-key-0123456789";

export interface LiveServer {
  /** e.g. `http://127.0.0.1:40123` */
  url: string;
  /** The scripted OpenAI server the service's provider calls: script the "model" here. */
  openai: ScriptedOpenAI;
  /** Stores a file as a server tool would have produced it, for the test principal; returns its size. */
  putFile(file: { fileId: string; name: string; mimeType: string; text: string }): Promise<number>;
  close(): Promise<void>;
}

/**
 * The real server over HTTP: `createApp` with the default catalog (the client tools of `defaultClientTools`),
 * in-memory stores, the real OpenAI adapter talking to a scripted OpenAI server, and one API key.
 */
export async function startLiveServer(): Promise<LiveServer> {
  const openai = await startScriptedOpenAI();
  // `make_file` asks first (docs/server-tools.md): every mode offers it, so `runTurn`'s `approve` can be tested.
  const catalog = AgentCatalog.create(
    {
      ...DEFAULT_CATALOG,
      modes: DEFAULT_CATALOG.modes.map((mode) => ({ ...mode, tools: [...mode.tools, "make_file"] })),
    },
    [{ ...createCreateFileTool("make_file"), approval: "always" } as ServerTool],
  );
  if (!catalog.successful) throw new Error(JSON.stringify(catalog.errors));
  const files = new InMemoryFileStore();
  const knowledge = new WorkspaceKnowledge({
    index: new InMemoryWorkspaceIndex(),
    hashes: sha256ContentHashService,
    ids: randomIdGenerator,
  });
  const service = new AgentService({
    retriever: knowledge,
    catalog: catalog.result,
    providers: [new OpenAIResponsesProvider({ apiKey: "test", baseURL: openai.baseUrl, maxRetries: 0 })],
    store: inMemorySessionStores(),
    files,
    eventFlushMs: 10,
    followPollMs: 20,
  });
  const app = createApp({
    service,
    knowledge,
    validate: createAgentExecuteRequestValidator(),
    apiKeys: new Map([[API_KEY, PRINCIPAL]]),
    maxBodyBytes: 1024 * 1024,
    readiness: async () => ({ ready: true }),
    logger: silentLogger,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const listening = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    openai,
    async putFile({ fileId, name, mimeType, text }) {
      const content = new TextEncoder().encode(text);
      const sizeBytes = content.byteLength;
      const stored = { fileId, principal: PRINCIPAL, name, mimeType, sizeBytes, contentHash: "sha256:0" };
      await files.put({ ...stored, createdAt: new Date(), expiresAt: null }, content);
      return sizeBytes;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ("closeAllConnections" in server) server.closeAllConnections();
      });
      await openai.close();
    },
  };
}

/** A fresh id, so the tests of one file can share a server. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}
