import { constants, mkdir, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { WORKSPACE_LIMITS } from "@aptix/contracts";
import { readTextFile } from "../workspace/text-file.js";
import type { TextFiles } from "./text-files.js";

/** Opening the file itself fails on a symlink put there since it was resolved (0 where the OS has no such flag). */
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * The workspace's files on disk. A read opens the file without following a symlink; a new file is created
 * exclusively and an existing one opened without following a symlink, so a link put there after the path was
 * checked fails the read or the write instead of being followed.
 */
export const diskTextFiles: TextFiles = {
  async read(file) {
    const text = await readTextFile(file.absolutePath, WORKSPACE_LIMITS.maxDocumentBytes, NO_FOLLOW);
    if (text.kind === "too_large")
      throw new Error(`${file.path} is ${text.bytes} bytes, more than the tools read.`);
    if (text.kind === "binary") throw new Error(`${file.path} is a binary file.`);
    return text.text;
  },
  async write(file, content, existed) {
    if (content === null) {
      await rm(file.absolutePath, { force: true });
      return;
    }
    await mkdir(dirname(file.absolutePath), { recursive: true });
    const flag = existed
      ? constants.O_WRONLY | constants.O_TRUNC | NO_FOLLOW
      : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
    await writeFile(file.absolutePath, content, { encoding: "utf8", flag });
  },
};
