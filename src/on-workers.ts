// Whether the package runs on Cloudflare Workers, where a request's timers and I/O end with it. A leaf module: the
// fetch handler, the memory queue and the inline runner all ask, and none of them may import another for it.

/**
 * True on Cloudflare Workers (the runtime's documented name for itself), read once: there a request's timers and I/O
 * end with it, so work past the answer needs its waitUntil.
 * @example
 * if (ON_WORKERS && response.background !== undefined) sayWorkLost();
 */
export const ON_WORKERS: boolean =
  (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
