/** Polls `f` every 100 ms until it returns a value; fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, f: () => T | undefined, timeoutMs = 240_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
