// Why a delivery got no answer, in the words of the fix: fetch's own codes (ECONNREFUSED, a TLS code) say neither.
import { refusedPortWords } from '../api/bad-port.js';

// Node's codes for a certificate the client does not trust (OpenSSL's names), and the host-name mismatch.
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

/**
 * What to do about `code` (from fetch's error or its cause) for `url`, or undefined for a code with no known fix.
 * @example
 * reachAdvice('ECONNREFUSED', new URL('http://localhost:3000/webhooks')) // 'nothing listens at localhost:3000: ...'
 */
export function reachAdvice(code: string, url: URL): string | undefined {
  const host = url.host;
  if (code === 'ECONNREFUSED')
    return `nothing listens at ${host}: start your app, or check the host and port in the URL`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `the host name ${url.hostname} does not resolve: check its spelling (and your DNS)`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ETIMEDOUT')
    return `no route to ${host}: check the address, and any firewall or VPN in between`;
  if (UNTRUSTED.has(code))
    return `the endpoint's TLS certificate is not trusted (a self-signed or private CA's certificate): the service checks it as this does, so serve one from a public CA; to try a local one here, trust its CA with NODE_EXTRA_CA_CERTS=<ca.pem>`;
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return `the endpoint's TLS certificate is ${code === 'CERT_HAS_EXPIRED' ? 'expired' : 'not valid yet'}: renew it (or check the clock)`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `the endpoint's TLS certificate is not for ${url.hostname}: use the host name it was issued for`;
  if (
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    code === 'EPROTO'
  )
    return `nothing speaks TLS at ${host}: use http:// for a plain HTTP server, or the port that serves https`;
  // llhttp's parse errors: something answered, but not in HTTP (an SSH, Postgres or mail port, a raw TCP service).
  if (code.startsWith('HPE_'))
    return `${host} does not answer in HTTP: check that the port in the URL is your app's, and see the log of what runs there`;
  if ((code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') && url.protocol === 'http:')
    return 'the connection was closed without an answer: if the server there is https, use https://; else see its log';
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET')
    return 'the connection was closed without an answer: see the log of the server (or proxy) there';
  return undefined;
}

/**
 * The line for a fetch of `url` that failed with `error`: what to do, then fetch's code.
 * @example
 * unreachable(new URL('http://localhost:3000/hook'), error) // 'nothing listens at localhost:3000: ...; error code ECONNREFUSED'
 */
export function unreachable(url: URL, error: unknown): string {
  const err = error as { message?: unknown; cause?: { code?: unknown; message?: unknown } } | undefined;
  const code = typeof err?.cause?.code === 'string' ? err.cause.code : undefined;
  const words = typeof err?.cause?.message === 'string' ? err.cause.message : String(err?.message);
  // fetch's bare "bad port" names neither the port nor that any port but a few dozen would do.
  if (code === undefined && words === 'bad port')
    return `${refusedPortWords(Number(url.port))}: use another port; error: bad port`;
  const advice = code === undefined ? undefined : reachAdvice(code, url);
  // The code last, where a script or a search engine finds it.
  if (advice !== undefined) return `${advice}; error code ${code}`;
  return code ?? words;
}
