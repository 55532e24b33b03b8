import type { Clock } from "@aptix/core";
import type { LeaseClockHarness } from "@aptix/testing-stores";
import type { AptixStore } from "../../src/index.js";

/**
 * Server instances over one store's data, for the lease clock contract: each is a store `open` makes with the
 * instance's own clock (leases left to the database's); `drop` removes the data once they are all closed.
 */
export function storeInstances(
  open: (clock: Clock) => Promise<AptixStore>,
  drop: () => Promise<void>,
): LeaseClockHarness {
  const opened: AptixStore[] = [];
  return {
    async instance(clock) {
      const store = await open(clock);
      opened.push(store);
      return store.sessions;
    },
    async close() {
      await Promise.all(opened.map((store) => store.close()));
      await drop();
    },
  };
}
