// Reading request headers from either a Web `Headers` or a Node-style header object.

type HeaderRecord = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * Request headers as adapters have them: Web `Headers`, or a plain object such as Node's `IncomingHttpHeaders`
 * (lower-case keys) or a serverless event's `headers` (the sender's case).
 */
export type HeadersInput = Headers | HeaderRecord;

/**
 * The value of a header by its lower-case name, whatever the case of the object's keys; a repeated header's values
 * are joined with `, `.
 * @example
 * headerValue(req.headers, 'svc-signature')
 */
export function headerValue(headers: HeadersInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as HeaderRecord;
  // Node's objects have lower-case keys: the one lookup. Header names are case-insensitive (RFC 9110 5.1), and an
  // object built elsewhere (an API Gateway or Azure event's `headers`) keeps the sender's `Svc-Signature`.
  const value = record[name] ?? anyCase(record, name);
  return typeof value === 'string' || value === undefined ? value : value.join(', ');
}

function anyCase(record: HeaderRecord, name: string): string | readonly string[] | undefined {
  for (const key of Object.keys(record)) {
    if (key.length === name.length && key.toLowerCase() === name) return record[key];
  }
  return undefined;
}

// `t=<unix seconds>,v1=<64 hex>` at the start of a value: a signature, whatever the header's name.
const SIGNATURE_VALUE = /^\s*t=\d{1,12}\s*,\s*v1=[0-9a-fA-F]{64}/;
// A name a log line may carry: a header name's usual characters, short (a serverless event's keys are anyone's text).
const LOGGABLE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The name of a header that carries the signature under another name than `Svc-Signature` (`x-svc-signature` from a
 * proxy's rule, `svc_signature` from a client or gateway that writes underscores), or undefined. Read on a refusal
 * only: it visits every header.
 * @example
 * signatureLookalike({ 'x-svc-signature': 't=1700000000,v1=5f2b...' }) // 'x-svc-signature'
 */
export function signatureLookalike(headers: HeadersInput): string | undefined {
  let found: string | undefined;
  const visit = (value: string, name: string): void => {
    if (found !== undefined || name.toLowerCase() === 'svc-signature' || !LOGGABLE_NAME.test(name)) return;
    const squeezed = name.toLowerCase().replace(/[-_.]/g, '');
    if (squeezed.endsWith('svcsignature') || SIGNATURE_VALUE.test(value)) found = name;
  };
  if (typeof (headers as Headers).get === 'function') (headers as Headers).forEach(visit);
  else {
    const record = headers as HeaderRecord;
    for (const name of Object.keys(record)) {
      const value = record[name];
      if (value !== undefined) visit(typeof value === 'string' ? value : value.join(', '), name);
    }
  }
  return found;
}
