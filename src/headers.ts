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
