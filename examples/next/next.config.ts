// Next config for the webhook example: answer at the URL itself, never with a redirect.
// #region config
import type { NextConfig } from 'next';

const config: NextConfig = {
  // Spec rule 5: the sender does not follow redirects and counts a 3xx as a failed delivery, and Next would
  // answer `/api/webhooks/workforce/` with a 308 by default.
  skipTrailingSlashRedirect: true,
};

export default config;
// #endregion config
