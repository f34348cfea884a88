// The explicit escape hatch past `on()`'s check, for event types the spec has not named yet, and the check's run-time half.
import type { SpecEventDataMap, UnknownEventType } from './types.js';

// The types the spec names, at run time: code run without a type check (tsx, plain JavaScript) meets no compile error.
const SPEC_TYPES = [
  'webhook.test',
  'leave.requested',
  'leave.approved',
  'leave.rejected',
  'leave.cancelled',
  'attendance.exception.approved',
  'attendance.absence_report.completed',
  'employee.created',
  'employee.terminated',
  'payroll.paid',
  'payroll.transfer_failed',
  'loan.disbursed',
  'candidate.stage_changed',
  'offer.accepted',
  'approval.completed',
] as const satisfies readonly (keyof SpecEventDataMap)[];

// Every type of the map is in the list: a type added to the spec map and not here fails to compile.
const complete: [Exclude<keyof SpecEventDataMap, (typeof SPEC_TYPES)[number]>] extends [never]
  ? true
  : never = true;
void complete;

const SPEC_PREFIXES: readonly string[] = [
  ...new Set(
    SPEC_TYPES.flatMap((type) =>
      type
        .split('.')
        .slice(0, -1)
        .map((_, i, parts) => parts.slice(0, i + 1).join('.')),
    ),
  ),
];

// A typo is one or two keystrokes: further off, a name is more likely a type of the user's own map.
const MAX_EDITS = 2;

// Strings given to unknownType: a type let in on purpose is never taken for a typo.
const marked = new Set<string>();

/**
 * Marks an event type (or `prefix.*`) that `EventDataMap` does not name, so `on()` accepts it on purpose; its
 * handler gets `data: Record<string, unknown>`. To type its payload instead, add it to the map.
 * @example
 * receiver.on(unknownType('benefits.enrolled'), (event) => audit(event.type, event.data));
 */
export function unknownType<const T extends string>(type: T): UnknownEventType<T> {
  // At run time it is the string itself, checked by the registry like any pattern; it is remembered only so that
  // `typoWarning` leaves it alone.
  marked.add(type);
  return type as UnknownEventType<T>;
}

/**
 * The warning for an `on()` pattern one or two keystrokes from a type (or `prefix.*`) the service sends, or a prefix
 * of its types without `.*` (`leave`), whose deliveries would be answered 200 ignored; undefined for any other
 * pattern, for one marked with `unknownType`, and when `handled` (optional) says a type meant already has a handler:
 * the pattern is then a name of the app's own beside it (`employer.*` beside `employee.*`), and the warning's every
 * claim would be false.
 * @example
 * typoWarning('leave.aproved'); // "... did you mean 'leave.approved'? ..."
 */
export function typoWarning(pattern: string, handled?: (type: string) => boolean): string | undefined {
  if (typeof pattern !== 'string' || marked.has(pattern)) return undefined;
  const wildcard = pattern.endsWith('.*');
  const name = wildcard ? pattern.slice(0, -2) : pattern;
  const known: readonly string[] = wildcard ? SPEC_PREFIXES : SPEC_TYPES;
  if (known.includes(name)) return undefined;
  // A prefix the service's types share, written without `.*` (`on('leave', ...)`), is taken as an exact type that is
  // never sent: it means the wildcard.
  const prefix = wildcard ? undefined : SPEC_PREFIXES.find((spec) => spec === name.toLowerCase());
  const near = prefix ?? nearest(name.toLowerCase(), known);
  if (near === undefined) return undefined;
  const meantPrefix = wildcard || prefix !== undefined;
  if (
    handled !== undefined &&
    (meantPrefix ? SPEC_TYPES.filter((type) => type.startsWith(`${near}.`)) : [near]).some(handled)
  )
    return undefined;
  const meant = meantPrefix ? `${near}.*` : near;
  return `workforce-webhooks: on('${pattern}') names no event type the service sends: did you mean '${meant}'? Deliveries of '${meant}' are answered 200 ignored (the service does not retry them) and this handler never runs. Fix: on('${meant}', ...); a type the service sends that the map does not name yet is let in with on(unknownType('${pattern}'), ...)`;
}

/**
 * The check `on()` makes of its patterns, order-independent: a near name is judged once the app's start-up code ran
 * (a microtask later), against every handler registered by then, so a name of its own registered before the
 * neighbour it sits beside, or before a catch-all, is not called a typo; a real typo is warned once per name.
 * @example
 * const checkTypos = createTypoCheck((type) => registry.match(type).length > 0, warnOnce);
 * checkTypos(['leave.aproved']); // warns once the calling code has run to its end, unless 'leave.approved' got a handler
 */
export function createTypoCheck(
  handled: (type: string) => boolean,
  warnOnce: (kind: string, obj: object, msg: string) => void,
): (patterns: readonly string[]) => void {
  // Names near a type the service sends, waiting for the end of the registrations; only on() ever fills it, so a
  // delivery pays nothing.
  let pending: string[] | undefined;
  const judge = (): void => {
    const names = pending!;
    pending = undefined;
    for (const name of names) {
      const typo = typoWarning(name, handled);
      if (typo !== undefined) warnOnce(`type_typo:${name}`, { pattern: name }, typo);
    }
  };
  return (patterns) => {
    for (const name of patterns) {
      if (typoWarning(name) === undefined) continue;
      if (pending === undefined) {
        pending = [];
        // Registrations are synchronous start-up code (the README: every on() before the app listens, before any
        // await): a microtask runs once they are all made, in every runtime (Workers allow no timer at start-up).
        queueMicrotask(judge);
      }
      pending.push(name);
    }
  };
}

// The one known name at most two edits away (insert, delete, replace, swap), when no other is as near.
function nearest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = MAX_EDITS + 1;
  let ties = 0;
  for (const candidate of known) {
    const distance = editDistance(name, candidate, MAX_EDITS + 1);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      ties = 1;
    } else if (distance === bestDistance) ties++;
  }
  return bestDistance <= MAX_EDITS && ties === 1 ? best : undefined;
}

// Optimal string alignment distance, given up (returning `cap`) once it cannot come under `cap`.
function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, before[j - 2]! + 1);
      current.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin >= cap) return cap;
    before = previous;
    previous = current;
  }
  return Math.min(previous[b.length]!, cap);
}
