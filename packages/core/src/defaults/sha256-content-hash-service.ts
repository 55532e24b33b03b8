import { createHash } from "node:crypto";
import type { ContentHashService } from "../ports/content-hash-service.js";

export const sha256ContentHashService: ContentHashService = {
  hash: (content) => `sha256:${createHash("sha256").update(content).digest("hex")}`,
};
