import type { FileStore } from "../ports/file-store.js";
import type { SessionStores } from "../ports/session-stores.js";
import type { TurnEventLog } from "../ports/turn-event-log.js";
import type { ManualClock } from "./manual-clock.js";

/** The stores one test agent of core's scenario suite runs on. */
interface ScenarioStores {
  store: SessionStores;
  files?: FileStore;
  events?: TurnEventLog;
}

/**
 * Makes fresh stores for each test agent of core's scenario suite. A store package reruns the suite on its
 * own stores by setting `globalThis.aptixScenarioStores` in a vitest setup file; unset, agents run in memory.
 */
export type ScenarioStoreFactory = (clock: ManualClock) => Promise<ScenarioStores>;

declare global {
  var aptixScenarioStores: ScenarioStoreFactory | undefined;
}
