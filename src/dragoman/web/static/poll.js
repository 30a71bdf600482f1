// Live refresh by polling: one call at a time, paused while the tab is hidden.

/** Runs ``task`` now and then every ``ms`` milliseconds until stopped. */
export function poll(task, ms) {
  let timer = null;
  let running = false;
  let again = false; // asked for while a call was running: run once more right after
  let stopped = false;

  async function tick() {
    clearTimeout(timer);
    if (running) again = true;
    if (stopped || running || document.hidden) return;
    running = true;
    try {
      await task();
    } catch {
      // the task shows its own errors; the banner covers an unreachable server
    } finally {
      running = false;
      if (again) {
        again = false;
        tick();
      } else if (!stopped && !document.hidden) {
        timer = setTimeout(tick, ms);
      }
    }
  }

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) clearTimeout(timer);
    else tick();
  });
  tick();
  return {
    now: tick,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
