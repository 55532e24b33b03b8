/** End-to-end helpers: the real server over HTTP, on PGlite or Postgres, against the scripted LLM servers of `@aptix/testing-llm-servers`. */
export * from "./e2e/index.js";
