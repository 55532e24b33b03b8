/**
 * The JSON of core's session views for the OpenAPI document: the schemas @aptix/contracts defines once
 * (dates travel as ISO strings). A test holds core's types to them.
 */
export { SessionSummarySchema, TurnSummarySchema, TurnTraceSchema } from "@aptix/contracts";

/** A JSON body as it travels: dates become strings. */
export type Jsonified<T> = T extends Date
  ? string
  : T extends readonly (infer U)[]
    ? Jsonified<U>[]
    : T extends object
      ? { [K in keyof T]: Jsonified<T[K]> }
      : T;
