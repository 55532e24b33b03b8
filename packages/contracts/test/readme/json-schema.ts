import requestSchema from "@aptix/contracts/schema/agent-execute-request.schema.json" with { type: "json" };
import { Ajv2020 } from "ajv/dist/2020.js";

// The schema states a property's type once, next to the `if`/`anyOf` fragments that refine it: Ajv's strictTypes
// would ask for it again in each fragment.
const ajv = new Ajv2020({ allErrors: true, strictTypes: false });

export const isAgentExecuteRequest = ajv.compile(requestSchema);
