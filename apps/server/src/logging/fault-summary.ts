/** What a log line says of one error of a chain. */
interface FaultPart {
  /** Its class's name (`error.name`), e.g. `DrizzleQueryError`, `PostgresError`. */
  type: string;
  /** A SQLSTATE or a Node error code, e.g. `22P05`, `ECONNRESET`. */
  code?: string;
}

/** What a log line says of a thrown error: see `faultSummary`. */
export interface FaultSummary extends FaultPart {
  /** What it wraps (`cause`), outermost first. */
  causes?: FaultPart[];
  /** Where it was thrown: the stack's frames, without the message heading them. */
  stack?: string;
}

/** How deep a chain of causes is followed. */
const MAX_CAUSES = 4;

/**
 * A thrown error as a log line may carry it: its type, its code and its frames, never its message. A database
 * driver's message quotes the statement and its parameters (a boot prompt, a transcript, a model's answer), and
 * a log is read by more people, and kept longer, than what it describes; the message goes to the trace instead
 * (the span's recorded exception). The code says what failed (`22P05`: text Postgres cannot keep) and the frames
 * say where.
 */
export function faultSummary(error: unknown): FaultSummary {
  const summary: FaultSummary = partOf(error);
  const causes: FaultPart[] = [];
  for (
    let cause = causeOf(error);
    cause !== undefined && causes.length < MAX_CAUSES;
    cause = causeOf(cause)
  ) {
    causes.push(partOf(cause));
  }
  if (causes.length > 0) summary.causes = causes;
  const stack = framesOf(error);
  if (stack !== undefined) summary.stack = stack;
  return summary;
}

function partOf(error: unknown): FaultPart {
  if (!(error instanceof Error)) return { type: typeof error };
  const code = (error as { code?: unknown }).code;
  // A code is a short token; anything else there is not one, and is left out like a message.
  return typeof code === "string" && /^[A-Za-z0-9_]{1,40}$/.test(code)
    ? { type: error.name, code }
    : { type: error.name };
}

function causeOf(error: unknown): unknown {
  return error instanceof Error && error.cause !== undefined ? error.cause : undefined;
}

/**
 * The frames of `error.stack`: V8 heads them with `String(error)` (its name and message), cut off here. A stack
 * headed otherwise (changed by hand) could hold the message anywhere, so none is given.
 */
function framesOf(error: unknown): string | undefined {
  if (!(error instanceof Error) || typeof error.stack !== "string") return undefined;
  const heading = String(error);
  return error.stack.startsWith(heading) ? error.stack.slice(heading.length).trim() : undefined;
}
