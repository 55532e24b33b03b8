import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { PGlite, type PGliteOptions } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PreparedPglite } from "./prepared-pglite.js";
import { type StoreStep, timedStep } from "./store-step.js";

/**
 * The Postgres settings of an embedded PGlite, whose memory is the Node process's own. With Postgres's default
 * `shared_buffers` (128MB) PGlite's WebAssembly heap grows from its 128MB minimum to about 190MB, nearly all of
 * it resident; with 16MB it stays at the minimum, of which about 30MB is ever touched. The buffers cache pages
 * for one connection over files that the OS caches too (or, for `memory://`, that are in memory already).
 */
export const PGLITE_SETTINGS: Readonly<Record<string, string>> = { shared_buffers: "16MB" };

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/**
 * The PGlite behind `memory://` or a directory (created if missing), started with {@link PGLITE_SETTINGS} and
 * `settings` over them, with the bundled pgvector loaded when `vectors` is set. They go on the command line, so they also hold for a directory initialized before they
 * changed, and to initdb, so a new directory's postgresql.conf says the same.
 *
 * A new database is initialized in a child process. PGlite's initdb runs a second, throwaway PGlite instance and
 * keeps a copy of its heap: in this process that left 400MB or more resident after start-up (V8 frees it at
 * some later full collection, and glibc keeps part of it even then), while a child gives it all back on exit.
 */
export async function createPglite(
  databaseUrl: string,
  settings: Readonly<Record<string, string>> = {},
  { vectors = false, onStep }: { vectors?: boolean; onStep?: ((step: StoreStep) => void) | undefined } = {},
): Promise<PGlite> {
  const params = Object.entries({ ...PGLITE_SETTINGS, ...settings }).flatMap(([name, value]) => {
    if (!SETTING_NAME.test(name)) throw new Error(`Invalid PGlite setting name ${JSON.stringify(name)}.`);
    return ["-c", `${name}=${value}`];
  });
  const options: PGliteOptions = {
    startParams: [...PGlite.defaultStartParams, ...params],
    initDbStartParams: params,
  };
  // Extensions are code, not options a child process could take: only the instance that serves loads them.
  const serving: PGliteOptions = vectors ? { ...options, extensions: { vector } } : options;
  if (databaseUrl.startsWith("memory://")) {
    // An in-memory PGlite takes its options alone (`new PGlite(undefined, options)` would ignore them).
    const initialized = await timedStep(onStep, "create", () => initializedInMemory(options));
    return new PreparedPglite({ ...serving, loadDataDir: new Blob([initialized]) });
  }
  await mkdir(databaseUrl, { recursive: true });
  if (!existsSync(join(databaseUrl, "PG_VERSION"))) {
    await timedStep(onStep, "create", () => initializeInChild(databaseUrl, options));
  }
  return new PreparedPglite(databaseUrl, serving);
}

/**
 * A new in-memory database's tarball, made once per process for the same options: a fresh `memory://` database
 * is the same bytes each time, and initdb costs seconds of CPU (every test service on `memory://` paid it).
 */
const inMemoryTarballs = new Map<string, Promise<Buffer>>();

function initializedInMemory(options: PGliteOptions): Promise<Buffer> {
  const key = JSON.stringify(options);
  let tarball = inMemoryTarballs.get(key);
  if (!tarball) {
    tarball = initializeInChild(undefined, options);
    // A failed initdb is not remembered: the next open tries again.
    tarball.catch(() => inMemoryTarballs.delete(key));
    inMemoryTarballs.set(key, tarball);
  }
  return tarball;
}

/** Run by `node -e`: initializes a PGlite database; an in-memory one is written to stdout as a gzipped tarball. */
const INITIALIZE = `
const [pglite, dataDir, options] = process.argv.slice(1);
const { PGlite } = require(pglite);
(async () => {
  const pg = dataDir === "" ? new PGlite(JSON.parse(options)) : new PGlite(dataDir, JSON.parse(options));
  await pg.waitReady;
  if (dataDir === "") process.stdout.write(new Uint8Array(await (await pg.dumpDataDir("gzip")).arrayBuffer()));
  await pg.close();
})().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
`;

/** Initializes `dataDir`, or a new in-memory database whose tarball it returns, in a child Node process. */
async function initializeInChild(dataDir: string | undefined, options: PGliteOptions): Promise<Buffer> {
  const pglite = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const child = spawn(process.execPath, ["-e", INITIALIZE, pglite, dataDir ?? "", JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const stdout: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  if (code !== 0) throw new Error(`PGlite's initdb failed (exit code ${code}): ${stderr.trim()}`);
  return Buffer.concat(stdout);
}
