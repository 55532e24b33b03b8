/** A configuration problem the operator must fix; start-up prints its message and exits. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
