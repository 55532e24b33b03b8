import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { afterEach, describe, expect, it } from "vitest";
import { createPglite } from "../src/create-pglite.js";
import { openStore, PGLITE_SETTINGS } from "../src/index.js";

/** The effective values of the memory settings PGlite starts with. */
async function memorySettings(client: PGlite): Promise<Record<string, string>> {
  const result = await client.query<{ name: string; setting: string }>(
    `select name, current_setting(name) as setting from pg_settings
     where name in ('shared_buffers', 'wal_buffers', 'work_mem', 'maintenance_work_mem', 'temp_buffers')`,
  );
  return Object.fromEntries(result.rows.map((row) => [row.name, row.setting]));
}

async function settingsOf(
  databaseUrl: string,
  settings?: Record<string, string>,
): Promise<Record<string, string>> {
  const client = await createPglite(databaseUrl, settings);
  try {
    return await memorySettings(client);
  } finally {
    await client.close();
  }
}

describe("PGlite's memory settings", () => {
  let directory: string | undefined;

  afterEach(async () => {
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    directory = undefined;
  });

  it("keeps shared_buffers at 16MB (Postgres's 128MB grows the WebAssembly heap by 60MB, all resident)", async () => {
    expect(PGLITE_SETTINGS).toStrictEqual({ shared_buffers: "16MB" });
    expect(await settingsOf("memory://")).toStrictEqual({
      shared_buffers: "16MB",
      wal_buffers: "512kB", // a 32nd of shared_buffers
      work_mem: "4MB",
      maintenance_work_mem: "64MB",
      temp_buffers: "8MB",
    });
  });

  it("writes them into a new directory's postgresql.conf, and starts older directories with them too", async () => {
    directory = await mkdtemp(join(tmpdir(), "aptix-pglite-settings-"));
    const path = join(directory, "db");
    const store = await openStore(path);
    expect(await store.readiness()).toStrictEqual({ ready: true });
    await store.close();
    const conf = join(path, "postgresql.conf");
    const written = await readFile(conf, "utf8");
    expect(written).toMatch(/^shared_buffers = 16MB\b/m);

    // A directory initialized before the setting existed has initdb's default in its postgresql.conf.
    await writeFile(conf, written.replace(/^shared_buffers = 16MB\b/m, "shared_buffers = 128MB"));
    expect((await settingsOf(path)).shared_buffers).toBe("16MB");
    expect((await settingsOf(path, { shared_buffers: "32MB" })).shared_buffers).toBe("32MB");
  });

  it("refuses a setting name that is not one", async () => {
    await expect(createPglite("memory://", { "shared_buffers=1GB -c x": "1" })).rejects.toThrow(
      /Invalid PGlite setting name/,
    );
  });
});
