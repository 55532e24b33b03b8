import { z } from "zod";
import { FIELD_LENGTH_LIMITS } from "../limits.js";

const idOf = (maxChars: number) =>
  z
    .string()
    .regex(
      new RegExp(`^[A-Za-z0-9._:-]{1,${maxChars}}$`),
      `must be 1–${maxChars} characters of letters, digits, '.', '_', ':' or '-'`,
    );

/** Client-minted ids (`sessionId`, `turnId`, context ids, image ids): safe in URLs and logs. */
export const IdentifierSchema = idOf(FIELD_LENGTH_LIMITS.maxIdChars);

/** Tool call ids are minted by the LLM provider (`call_…`, `toolu_…`); they get more room than client ids. */
export const ToolCallIdSchema = idOf(FIELD_LENGTH_LIMITS.maxToolCallIdChars);
