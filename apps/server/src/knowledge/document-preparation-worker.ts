import {
  type PrepareDocumentInput,
  type PreparedDocument,
  prepareDocument,
  sha256ContentHashService,
} from "@aptix/core";

export { readPushBody } from "./read-push-body.js";

/** The task a `DocumentPreparationPool` thread runs: core's `prepareDocument`, hashing as the server does. */
export default function prepare(input: PrepareDocumentInput): PreparedDocument {
  return prepareDocument(input, sha256ContentHashService);
}
