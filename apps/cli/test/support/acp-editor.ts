import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import {
  type ClientConnection,
  client,
  type InitializeResponse,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { APTIX_BIN } from "./aptix-process.js";
import { API_KEY } from "./aptix-server.js";

export interface AcpEditorOptions {
  /** The service the agent talks to. */
  url: string;
  /** Offer `fs/read_text_file` and `fs/write_text_file` (default true): the agent then reads and writes here. */
  fs?: boolean;
  /** The editor's open buffers by absolute path: a read is answered from here first, then from the disk. */
  buffers?: Map<string, string>;
  /** Answers `session/request_permission` (default: reject). */
  permission?: (request: RequestPermissionRequest) => Promise<RequestPermissionResponse>;
  /** Called with each `session/update` as it arrives (after it is recorded). */
  onUpdate?: (notification: SessionNotification) => void;
  /** More arguments of `aptix acp` (`--allow-ignored`). */
  args?: string[];
  /** More environment of `aptix acp` (`APTIX_CONFIG`). */
  env?: Record<string, string>;
}

export interface AcpEditor {
  /** The editor's side of the connection: `agent.request("session/new", …)` and so on. */
  connection: ClientConnection;
  /** Sends `initialize`, offering the `fs` methods unless `fs: false`. */
  initialize(): Promise<InitializeResponse>;
  /** Every `session/update` the agent sent, in order. */
  updates: SessionNotification[];
  /** Every `fs/read_text_file` and `fs/write_text_file` call, in order. */
  reads: string[];
  writes: Array<{ path: string; content: string }>;
  permissions: RequestPermissionRequest[];
  /** Every line the agent wrote on stdout, as written. */
  stdoutLines(): string[];
  stderr(): string;
  /** Closes stdin and waits for the agent to exit; its exit code. */
  close(): Promise<number | null>;
}

/**
 * An editor, played with the SDK's client-side connection: it spawns the built `aptix acp` as editors do (its
 * stdin and stdout carry the protocol), answers the agent's `fs/*` calls from its buffers (else the disk, as an
 * editor does for a file it has not opened), and records what the agent sends.
 */
export function startAcpEditor(cwd: string, options: AcpEditorOptions): AcpEditor {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [APTIX_BIN, "acp", "--url", options.url, ...(options.args ?? [])],
    {
      cwd,
      env: { ...process.env, NO_COLOR: "1", APTIX_API_KEY: API_KEY, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  // What the agent writes is kept as written, and handed on to the connection while it reads.
  let reading = true;
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString("utf8");
        if (reading) controller.enqueue(new Uint8Array(chunk));
      });
      child.stdout.on("end", () => {
        if (reading) controller.close();
      });
    },
    cancel() {
      reading = false;
    },
  });
  const output = new WritableStream<Uint8Array>({
    write: (chunk) =>
      new Promise<void>((resolve, reject) =>
        child.stdin.write(chunk, (error) => (error ? reject(error) : resolve())),
      ),
    close: () => new Promise<void>((resolve) => child.stdin.end(resolve)),
  });
  const updates: SessionNotification[] = [];
  const reads: string[] = [];
  const writes: Array<{ path: string; content: string }> = [];
  const permissions: RequestPermissionRequest[] = [];
  const buffers = options.buffers ?? new Map<string, string>();
  const app = client({ name: "test-editor" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
      options.onUpdate?.(params);
    })
    .onRequest("fs/read_text_file", async ({ params }) => {
      reads.push(params.path);
      const buffer = buffers.get(params.path);
      if (buffer !== undefined) return { content: buffer };
      return { content: await readFile(params.path, "utf8") };
    })
    .onRequest("fs/write_text_file", async ({ params }) => {
      writes.push({ path: params.path, content: params.content });
      buffers.set(params.path, params.content);
      // A new file in a new folder: the folder is made, as an editor saving a new buffer does.
      await mkdir(dirname(params.path), { recursive: true });
      await writeFile(params.path, params.content);
      return {};
    })
    .onRequest("session/request_permission", async ({ params }) => {
      permissions.push(params);
      return options.permission
        ? await options.permission(params)
        : { outcome: { outcome: "selected", optionId: "reject_once" } };
    });
  const connection = app.connect(ndJsonStream(output, input));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const fs = options.fs ?? true;
  return {
    connection,
    initialize: () =>
      connection.agent.request("initialize", {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: fs, writeTextFile: fs } },
        clientInfo: { name: "test-editor", version: "1.0.0" },
      }),
    updates,
    reads,
    writes,
    permissions,
    stdoutLines: () => stdout.split("\n").filter((line) => line !== ""),
    stderr: () => stderr,
    async close() {
      connection.close();
      child.stdin.end();
      return await exited;
    },
  };
}
