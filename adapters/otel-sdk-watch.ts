// Looks, once a second for the first minutes, for an OpenTelemetry SDK registered after the receiver was made.

// An SDK registers at start-up: two minutes of looks find it, or nothing will.
const SDK_LOOKS = 120;

/**
 * Calls `look` once a second, up to 120 times, until it returns true (it found the SDK, or gave up). Its timer never
 * holds the process open; where none can be set (a Worker's top level) or unref'd (Deno), it looks not at all and
 * leaves the SDK to the first delivery's adoption.
 * @example
 * watchForSdk(() => { adopt(); return instruments.measuring; });
 */
export function watchForSdk(look: () => boolean): void {
  let left = SDK_LOOKS;
  let timer: ReturnType<typeof setInterval> | undefined;
  const tick = (): void => {
    if (look() || --left <= 0) clearInterval(timer);
  };
  try {
    timer = setInterval(tick, 1000);
  } catch {
    return; // A Worker's top level sets no timer: the first delivery adopts the SDK.
  }
  // One that cannot be unref'd (Deno's) would hold a finished script open for minutes.
  if (typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
  else clearInterval(timer);
}
