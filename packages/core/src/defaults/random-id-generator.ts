import { randomUUID } from "node:crypto";
import type { IdGenerator } from "../ports/id-generator.js";

export const randomIdGenerator: IdGenerator = {
  newId: (prefix) => `${prefix}_${randomUUID().replaceAll("-", "")}`,
};
