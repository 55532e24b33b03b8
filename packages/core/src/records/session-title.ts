import { SESSION_TITLE_LENGTH } from "@aptix/contracts";

/** A session's title in its list entry: its first instruction's start, trailing white space trimmed. */
export function sessionTitle(firstInstruction: string | undefined): string {
  return (firstInstruction ?? "").slice(0, SESSION_TITLE_LENGTH).trimEnd();
}
