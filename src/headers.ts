// Reading request headers from either a Web `Headers` or a Node-style lower-cased header object.

/** Request headers as adapters have them: Web `Headers`, or Node's `IncomingHttpHeaders` (lower-case keys). */
export type HeadersInput = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The value of a header by its lower-case name; a repeated header's values are joined with `, `.
 * @example
 * headerValue(req.headers, 'svc-signature')
 */
export function headerValue(headers: HeadersInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | readonly string[] | undefined>)[name];
  return typeof value === 'string' || value === undefined ? value : value.join(', ');
}
