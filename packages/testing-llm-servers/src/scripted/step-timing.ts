/**
 * Pauses for a scripted delay (`delayMs`, `chunkDelayMs`) but wakes as soon as the client goes away, so a
 * slow step never keeps a closed request (or `server.close()`) waiting.
 */
export function pauseUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
