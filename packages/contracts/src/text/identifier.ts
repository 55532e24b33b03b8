import { z } from "zod";

/** Client-minted ids (`sessionId`, `turnId`, context ids, image ids): 1–128 characters, safe in URLs and logs. */
export const IdentifierSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, "must be 1–128 characters of letters, digits, '.', '_', ':' or '-'");

/** Tool call ids are minted by the LLM provider (`call_…`, `toolu_…`); they get more room than client ids. */
export const ToolCallIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,256}$/, "must be 1–256 characters of letters, digits, '.', '_', ':' or '-'");
