import { type FileStore, QuotaExceededError } from "@aptix/core";
import { type ManualClock, newStoredFile } from "@aptix/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/** What a contract run needs from the file store under test, made afresh (over empty data) for every test. */
interface FileStoreHarness {
  store: FileStore;
  /** The clock the store judges `expiresAt` by. */
  clock: ManualClock;
  close(): Promise<void>;
}

/**
 * The behaviour every `FileStore` shares: what is put comes back exactly (as copies), only to its principal,
 * expired or not, until `deleteExpired` removes it once `expiresAt <= now`. Call it at the top level of a test
 * file.
 */
export function describeFileStoreContract(
  name: string,
  makeFileStore: () => Promise<FileStoreHarness>,
): void {
  describe(`FileStore contract: ${name}`, () => {
    let harness: FileStoreHarness | undefined;
    let store: FileStore;
    let clock: ManualClock;

    beforeEach(async () => {
      harness = await makeFileStore();
      store = harness.store;
      clock = harness.clock;
    });

    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    });

    /** Every byte value, so no encoding step can go unnoticed. */
    const allBytes = () => Uint8Array.from({ length: 256 }, (_, index) => index);

    it("gives back what was put: metadata exactly and the content byte for byte", async () => {
      const file = newStoredFile("principal-a", "file_1", {
        sizeBytes: 256,
        createdAt: clock.now(),
        expiresAt: new Date(clock.now().getTime() + 60_000),
      });
      await store.put(file, allBytes());
      const got = await store.get("principal-a", "file_1");
      expect(got?.file).toStrictEqual(file);
      expect(got?.file.createdAt).toBeInstanceOf(Date);
      expect(got?.content).toBeInstanceOf(Uint8Array);
      expect(Array.from(got?.content ?? [])).toEqual(Array.from(allBytes()));

      const empty = newStoredFile("principal-a", "file_2", {
        sizeBytes: 0,
        name: "empty.txt",
        mimeType: "text/plain",
      });
      await store.put(empty, new Uint8Array(0));
      const gotEmpty = await store.get("principal-a", "file_2");
      expect(gotEmpty?.file).toStrictEqual(empty);
      expect(gotEmpty?.content.length).toBe(0);
    });

    it("answers undefined for an unknown id and for another principal's file", async () => {
      await store.put(newStoredFile("principal-a", "file_1"), allBytes());
      expect(await store.get("principal-a", "file_404")).toBeUndefined();
      expect(await store.get("principal-b", "file_1")).toBeUndefined();
      expect(await store.get("principal-a", "file_1")).toBeDefined();
    });

    it("serves an expired file until the sweep, which deletes only files with expiresAt <= now", async () => {
      const expiresAt = new Date(clock.now().getTime() + 60_000);
      await store.put(newStoredFile("principal-a", "file_expiring", { expiresAt }), allBytes());
      await store.put(
        newStoredFile("principal-b", "file_later", { expiresAt: new Date(expiresAt.getTime() + 1) }),
        allBytes(),
      );
      await store.put(newStoredFile("principal-a", "file_forever", { expiresAt: null }), allBytes());
      clock.advance(59_999);
      expect(await store.deleteExpired(100)).toBe(0);
      clock.advance(1);
      // Expired: still there for its reader to answer "expired" rather than "unknown".
      expect((await store.get("principal-a", "file_expiring"))?.file.expiresAt).toStrictEqual(expiresAt);
      expect(await store.deleteExpired(100)).toBe(1);
      expect(await store.get("principal-a", "file_expiring")).toBeUndefined();
      expect(await store.get("principal-b", "file_later")).toBeDefined();
      clock.advance(365 * 24 * 3_600_000);
      expect(await store.deleteExpired(100)).toBe(1);
      expect((await store.get("principal-a", "file_forever"))?.file.expiresAt).toBeNull();
    });

    it("deletes at most `limit` expired files a call", async () => {
      for (const id of ["file_1", "file_2", "file_3"]) {
        await store.put(newStoredFile("principal-a", id, { expiresAt: clock.now() }), allBytes());
      }
      expect(await store.deleteExpired(2)).toBe(2);
      expect(await store.deleteExpired(2)).toBe(1);
      expect(await store.deleteExpired(2)).toBe(0);
    });

    it("keeps a file within quotaBytes only: past it, throws QuotaExceededError and stores nothing", async () => {
      const quota = { quotaBytes: 600 };
      const sized = (principal: string, id: string) => newStoredFile(principal, id, { sizeBytes: 256 });
      await store.put(sized("principal-a", "file_1"), allBytes(), quota);
      await store.put(sized("principal-a", "file_2"), allBytes(), quota);
      const refused = store.put(sized("principal-a", "file_3"), allBytes(), quota);
      await expect(refused).rejects.toBeInstanceOf(QuotaExceededError);
      await expect(refused).rejects.toEqual(new QuotaExceededError("APTIX_QUOTA_FILE_BYTES", 512, 256, 600));
      expect(await store.get("principal-a", "file_3")).toBeUndefined();
      // Replacing a file counts it once; another principal has a quota of its own.
      await store.put(sized("principal-a", "file_2"), allBytes(), quota);
      await store.put(sized("principal-b", "file_3"), allBytes(), quota);
      // Concurrent puts of one principal judge each other's files: of two, one fits.
      const raced = await Promise.allSettled(
        ["file_4", "file_5"].map((id) => store.put(sized("principal-b", id), allBytes(), quota)),
      );
      expect(raced.map((each) => each.status).sort()).toEqual(["fulfilled", "rejected"]);
      // Without a quota, nothing is counted.
      await store.put(sized("principal-a", "file_6"), allBytes());
      expect(await store.get("principal-a", "file_6")).toBeDefined();
    });

    it("keeps copies: changing the given or returned bytes does not change the stored file", async () => {
      const content = allBytes();
      await store.put(newStoredFile("principal-a", "file_1"), content);
      content.fill(0);
      const first = await store.get("principal-a", "file_1");
      first?.content.fill(7);
      first?.file.createdAt.setTime(0);
      const second = await store.get("principal-a", "file_1");
      expect(Array.from(second?.content ?? [])).toEqual(Array.from(allBytes()));
      expect(second?.file).toStrictEqual(newStoredFile("principal-a", "file_1"));
    });
  });
}
