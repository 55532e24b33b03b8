import { z } from "zod";

const id = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,128}$/, "must be 1–128 characters of letters, digits, '.', '_', ':' or '-'");
const toolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1–64 characters of letters, digits, '_' or '-'");

/**
 * The `APTIX_CONFIG` file (docs/configuration.md) for a server with these providers. Unknown keys are refused so a
 * typo never passes silently, and so is a provider with no adapter: its turns could only fail.
 */
export const catalogConfigSchema = (providerIds: readonly string[]) =>
  z.strictObject({
    conversationContexts: z
      .array(
        z.strictObject({
          id,
          bootPrompt: z.string().min(1),
          model: z.string().min(1),
          provider: z.string().refine((provider) => providerIds.includes(provider), {
            error: (issue) =>
              `${JSON.stringify(issue.input)} is not a provider this server has (${providerIds.join(", ")})`,
          }),
          defaultMode: z.string().min(1).optional(),
          maxOutputTokens: z.int().positive().optional(),
        }),
      )
      .min(1),
    modes: z
      .array(
        z.strictObject({
          id,
          displayName: z.string().min(1),
          tools: z.array(toolName),
          toolChoice: toolName.nullable(),
          instructions: z.string(),
          welcomeMessage: z.string().optional(),
        }),
      )
      .min(1),
    clientTools: z.array(
      z.strictObject({
        name: toolName,
        description: z.string().min(1),
        parameters: z.record(z.string(), z.unknown()),
        strict: z.boolean().optional(),
      }),
    ),
  });

export type CatalogConfig = z.infer<ReturnType<typeof catalogConfigSchema>>;
