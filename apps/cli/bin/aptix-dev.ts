// `pnpm aptix <args>` at the repository root runs the CLI from its TypeScript sources through tsx, so a fresh
// clone needs `pnpm install` and no build. pnpm runs root scripts in the root and names the directory it was
// called from in INIT_CWD: that is the directory the user means (the default workspace).
process.chdir(process.env.INIT_CWD ?? process.cwd());
// Hints that name a command to run say `pnpm aptix index`, as the user runs it here.
process.env.APTIX_CLI_COMMAND ??= "pnpm aptix";
await import("../src/main.js");
