/**
 * Resolves with `read()` once `done` holds of it, reading again every `everyMs`: a wait for state that no
 * event announces (a row of pg_stat_activity, a metric, a connection count). It has no deadline of its own:
 * a busy machine makes it later, never red, and the test's own timeout ends a wait for a state that never comes.
 */
export async function eventually<T>(read: () => T | Promise<T>, done: (value: T) => boolean, everyMs = 50): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
