import type { FieldError, InvokeError } from "@aptix/contracts";

/** One line per problem: each failing field of a VALIDATION_FAILED, otherwise the error's code and message. */
export function describeFailure(failure: { errors: readonly InvokeError[] }): string[] {
  return failure.errors.flatMap((error) => {
    const fields =
      error.code === "VALIDATION_FAILED" ? (error.details?.fields as FieldError[] | undefined) : undefined;
    if (fields === undefined) return [`${error.code}: ${error.message}`];
    // `path` names the field (`inputArtifacts[0].relativePath`); "" is the whole body.
    return fields.map((field) => (field.path === "" ? field.message : `${field.path} ${field.message}`));
  });
}
