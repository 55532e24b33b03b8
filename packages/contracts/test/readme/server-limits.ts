import { createAgentExecuteRequestValidator } from "@aptix/contracts";

// The limits a server published; the others keep their defaults.
export const validateForServer = createAgentExecuteRequestValidator({ maxArtifactBytes: 512 * 1024 });
