// A relative import, not `@aptix/tooling/vitest`: Vitest bundles relative imports of its config file, while a
// package import is left to Node, which cannot load the shared config's `.ts` file (ERR_UNKNOWN_FILE_EXTENSION).
import { sharedVitestConfig } from "../../tooling/vitest.shared.js";

export default sharedVitestConfig;
