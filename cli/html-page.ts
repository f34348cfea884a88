// An answer that is an HTML page: what an app serves for a path it has no route for, never a receiver's answer.

/**
 * What to look at first when a delivery was answered with a page: the URL is not the webhook route.
 * @example
 * io.stderr(`workforce-webhooks: ${PAGE_HINT}\n`);
 */
export const PAGE_HINT: string =
  "is --url the webhook route? An app answers a path it has no route for with its HTML page (a single-page app's fallback): mount the receiver for POST at that exact path";

/**
 * True for a 2xx whose body is an HTML document: a single-page app's fallback took the delivery, and no receiver saw it.
 * @example
 * isHtmlPage(200, '<!DOCTYPE html><html>...') // true
 */
export function isHtmlPage(status: number, body: string): boolean {
  // A 4xx or 5xx may be a framework's HTML error page in front of a real receiver; only an acceptance is suspect.
  return status >= 200 && status < 300 && /^\s*(<!doctype html|<html[\s>])/i.test(body);
}
