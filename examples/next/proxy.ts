// An auth gate like most apps have: its matcher must leave the webhook route out, or deliveries get redirected.
// #region proxy
import { type NextRequest, NextResponse } from 'next/server';

export function proxy(request: NextRequest): NextResponse {
  if (request.cookies.has('session')) return NextResponse.next();
  return NextResponse.redirect(new URL('/login', request.url));
}

export const config = {
  // Everything except the webhook route and Next's own assets: a redirect is a failed delivery (spec rule 5).
  matcher: ['/((?!api/webhooks|_next/).*)'],
};
// #endregion proxy
