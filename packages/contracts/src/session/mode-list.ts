import { z } from "zod";

/**
 * `GET /v1/modes`: the modes of the catalog, for the principal's default conversation context, as a client shows
 * them (an editor's mode picker). `defaultModeId` is the mode a new session starts in. The mode is the service's
 * to change (`agent_change_mode`): clients show it, they do not set it.
 */
export const ModeListSchema = z.strictObject({
  modes: z.array(z.strictObject({ id: z.string(), displayName: z.string() })),
  defaultModeId: z.string(),
});

export type ModeList = z.infer<typeof ModeListSchema>;
