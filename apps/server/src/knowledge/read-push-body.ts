import {
  type InvokeResult,
  type PutWorkspaceDocumentsRequest,
  validatePutWorkspaceDocumentsRequest,
} from "@aptix/contracts";
import { validatedJson } from "../http/json-body.js";

/**
 * A push's JSON body, parsed and validated as `PUT …/documents` takes it. Megabytes of documents take tens of
 * milliseconds of parsing and scanning, so the server runs it in its worker threads (`DocumentPreparationPool`).
 */
export function readPushBody(body: Uint8Array): InvokeResult<PutWorkspaceDocumentsRequest> {
  return validatedJson(body, validatePutWorkspaceDocumentsRequest);
}
