import { z } from "zod";

/**
 * The arguments of the default client tools (`defaultClientTools` in `@aptix/contracts`), checked before a tool
 * runs: strict mode sends an optional argument as `null`, other providers may leave it out, so both mean "not
 * given". A bad argument is the call's `errorMessage`, naming the field.
 */
const optionalText = z.string().min(1).nullish();
const lineNumber = z.int().min(1).nullish();

export const readFileArguments = z.looseObject({
  path: z.string().min(1),
  startLine: lineNumber,
  endLine: lineNumber,
});
export const listFilesArguments = z.looseObject({ path: optionalText, glob: optionalText });
export const searchFilesArguments = z.looseObject({ query: z.string().min(1), glob: optionalText });
export const applyPatchArguments = z.looseObject({ patch: z.string().min(1) });

/** The parsed arguments, or an Error whose message names each bad field. */
export function parseArguments<T extends z.ZodType>(schema: T, tool: string, args: unknown): z.output<T> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`,
  );
  throw new Error(`Invalid ${tool} arguments: ${problems.join("; ")}.`);
}
