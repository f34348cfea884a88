// The receiver's `secret` option: a value now, or a function read at each delivery, so a build can run without it.
import { errorClassOf } from './dead-letters.js';
import { ConfigurationError } from './errors.js';
import { isPromise } from './is-promise.js';
import { createWarnOnce, type Logger } from './logger.js';
import { type Secret, secretList } from './secret-list.js';

/**
 * The `secret` option of `createReceiver`: the endpoint's secret, several during rotation, or a function returning
 * them. `undefined` (an unset environment variable at build time) is allowed: deliveries are then answered 500
 * `not_configured` until the secret is there.
 */
export type SecretOption = Secret | undefined | (() => Secret | undefined);

/** The checked secrets to verify a delivery with now, or `undefined` when none is configured. */
export type SecretSource = () => readonly string[] | undefined;

/** The environment variable the README and the log lines name for the secret. */
export const SECRET_ENV = 'WORKFORCE_WEBHOOK_SECRET';

/**
 * What the receiver logs, once, when a delivery arrives and no secret is configured.
 * @example
 * logger.error({}, NOT_CONFIGURED);
 */
export const NOT_CONFIGURED: string = `workforce-webhooks: no signing secret is configured, so deliveries are answered 500 not_configured. Set ${SECRET_ENV} to the endpoint's \`whsec_...\` secret and pass it as the \`secret\` option of createReceiver (\`secret: () => process.env.${SECRET_ENV}\` reads it at each delivery).`;

const WHITESPACE = `workforce-webhooks: the secret has leading or trailing whitespace (a stray newline in the environment?). It is used as given, whitespace included, so signatures made with the trimmed secret do not match: remove it where the value is set, or trim it where it is read (\`secret: process.env.${SECRET_ENV}?.trim()\`).`;

const QUOTED =
  'workforce-webhooks: the secret is wrapped in quotes (an env file read by docker --env-file or a systemd EnvironmentFile keeps them). It is used as given, quotes included, so no signature matches: remove the quotes around the value.';

const NO_PREFIX =
  "workforce-webhooks: the secret does not start with `whsec_`, as the endpoint's secret does. The key is the whole string, prefix included, so no signature matches: pass it exactly as shown when the endpoint was created, `whsec_` and all.";

// Spec "Subscription" 2: the secret shown on creation starts with `whsec_`; "Signature": it is the HMAC key whole.
const PREFIX = 'whsec_';
const isQuoted = (s: string): boolean =>
  s.length >= 2 && ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'")));

/**
 * Builds the receiver's view of `secret`. A value is checked once, here: a malformed one throws, a missing one
 * leaves the receiver unconfigured. A function is called at every delivery (so a rotated secret is used at once)
 * and its answer is checked again only when it changes.
 * @example
 * const secrets = createSecretSource(() => process.env.WORKFORCE_WEBHOOK_SECRET, logger); secrets(); // ['whsec_...'] or undefined
 */
export function createSecretSource(secret: SecretOption, logger: Logger): SecretSource {
  const warnOnce = createWarnOnce(logger);
  const check = (value: Secret | undefined): readonly string[] | undefined => {
    if (value === undefined || value === '' || (Array.isArray(value) && value.length === 0)) return undefined;
    const list = secretList(value);
    // Each shape mistake is said once, with its fix; the secret itself never is. A secret already named as padded
    // or quoted is not also named for its prefix: that line would send the reader after the wrong fix.
    for (const s of list) {
      const trimmed = s.trim();
      if (trimmed !== s) warnOnce('secret_whitespace', {}, WHITESPACE);
      else if (isQuoted(s)) warnOnce('secret_quoted', {}, QUOTED);
      else if (!s.startsWith(PREFIX)) warnOnce('secret_prefix', {}, NO_PREFIX);
    }
    return list;
  };
  if (typeof secret !== 'function') {
    const list = check(secret);
    return () => list;
  }
  let last: Secret | undefined;
  let checked: readonly string[] | undefined;
  return () => {
    let value: Secret | undefined;
    try {
      value = secret();
      if (isPromise(value)) {
        // A JS caller's async function: its rejection would go unhandled (which ends a Node process).
        Promise.resolve(value).catch(() => {});
        throw new ConfigurationError(
          'the `secret` function returned a promise; it must return the secret itself (read an async secret store once at start-up, then return what it gave)',
        );
      }
      if (value === last && checked !== undefined) return checked;
      checked = check(value);
      last = value;
      return checked;
    } catch (error) {
      // The message names the option, never the value, and the error is named by its class only: its message
      // may quote what was being read (JSON.parse does), so a log line never carries a secret.
      const msg =
        error instanceof ConfigurationError
          ? error.message
          : `workforce-webhooks: the \`secret\` function threw (${errorClassOf(error)})`;
      warnOnce('secret_invalid', { errorClass: errorClassOf(error) }, msg, 'error');
      return undefined;
    }
  };
}
