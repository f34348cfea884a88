// The ports fetch refuses to connect to (the Fetch standard's "bad ports"): a URL on one can never be reached.

// https://fetch.spec.whatwg.org/#bad-port: every fetch (Node, browsers, Deno, Workers) fails at once on these,
// with a bare "bad port" that names neither the port nor the fix.
const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104,
  109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515,
  526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * Why fetch will refuse `url` (`port 6666 is one fetch refuses to connect to`), or undefined when it will try it.
 * @example
 * refusedPort(new URL('http://127.0.0.1:6666/webhooks')) // 'port 6666 is one fetch refuses to connect to (...)'
 */
export function refusedPort(url: URL): string | undefined {
  // An http(s) URL's own default port (80, 443) is never a bad port, and URL leaves port '' for it.
  const port = url.port === '' ? undefined : Number(url.port);
  return port !== undefined && BAD_PORTS.has(port) ? refusedPortWords(port) : undefined;
}

/**
 * Whether fetch refuses to connect to `port`, for a port not yet in a URL (`mock --port`).
 * @example
 * isRefusedPort(6666) // true
 */
export function isRefusedPort(port: number): boolean {
  return BAD_PORTS.has(port);
}

/**
 * Says that fetch refuses `port`, and where that comes from.
 * @example
 * refusedPortWords(6666) // 'port 6666 is one fetch refuses to connect to (...)'
 */
export const refusedPortWords = (port: number): string =>
  `port ${port} is one fetch refuses to connect to (a "bad port" of the Fetch standard, blocked in Node, browsers and edge runtimes)`;
