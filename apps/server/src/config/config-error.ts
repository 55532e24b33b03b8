/**
 * A configuration problem the operator must fix; start-up logs it and exits. `problems` name each bad key (one
 * log line each, so a terminal and a log viewer show them as lines, not as one line of escaped newlines).
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly problems: readonly string[];
  readonly #summary: string;

  constructor(summary: string, problems: readonly string[] = []) {
    super(problems.length === 0 ? summary : `${summary}:\n  ${problems.join("\n  ")}`);
    this.#summary = summary;
    this.problems = problems;
  }

  /** What start-up logs: the summary alone, or one line per problem, each saying what it is a problem of. */
  get lines(): string[] {
    return this.problems.length === 0
      ? [this.#summary]
      : this.problems.map((problem) => `${this.#summary}: ${problem}`);
  }
}
