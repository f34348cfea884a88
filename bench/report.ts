// What each benchmark section reports: tables (printed as Markdown) and targets checked as ratios.

/** One table of a section, printed as Markdown so it pastes straight into docs/benchmarks.md. */
export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
  readonly note?: string;
}

/** A target of the issue, as a measured ratio against its goal. */
export interface Target {
  readonly name: string;
  readonly value: number;
  /** The smallest passing value, or the largest when `atMost` is set. */
  readonly goal: number;
  readonly atMost?: boolean;
  /** How the value reads: a ratio (default) or a plain count. */
  readonly unit?: 'ratio' | 'count';
}

/** What a section process hands back to `bench/run.ts`. */
export interface SectionResult {
  readonly tables: readonly Table[];
  readonly targets: readonly Target[];
}

const MARK = 'BENCH_RESULT ';

/**
 * Prints a section's result on stdout for `bench/run.ts` to collect.
 * @example
 * emit({ tables: [table], targets: [] });
 */
export function emit(result: SectionResult): void {
  process.stdout.write(`${MARK}${JSON.stringify(result)}\n`);
}

/**
 * Finds a section's result in its stdout.
 * @example
 * const result = collect(stdout);
 */
export function collect(stdout: string): SectionResult | undefined {
  const line = stdout.split('\n').find((l) => l.startsWith(MARK));
  return line === undefined ? undefined : (JSON.parse(line.slice(MARK.length)) as SectionResult);
}

/**
 * True when a target is met.
 * @example
 * met({ name: 'x', value: 0.95, goal: 0.9 }) // true
 */
export function met(target: Target): boolean {
  return target.atMost === true ? target.value <= target.goal : target.value >= target.goal;
}

/**
 * A target's value or goal as it should read.
 * @example
 * show({ name: 'round trips', value: 1, goal: 1, unit: 'count' }, 1) // '1.00'
 */
export function show(target: Target, value: number, digits = 2): string {
  return target.unit === 'count' ? value.toFixed(digits) : ratio(value, digits);
}

/**
 * Renders a table as Markdown.
 * @example
 * console.log(markdown(table));
 */
export function markdown({ title, columns, rows, note }: Table): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const head = [`### ${title}`, '', line(columns), line(columns.map((_, i) => (i === 0 ? '---' : '---:')))];
  return [...head, ...rows.map(line), ...(note === undefined ? [] : ['', note])].join('\n');
}

/**
 * A rate with thousands separators, no decimals.
 * @example
 * ops(123456.7) // '123,457'
 */
export function ops(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/**
 * A ratio as `0.97×`, with two decimals unless told.
 * @example
 * ratio(1.234) // '1.23×'
 */
export function ratio(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${value.toFixed(digits)}×` : 'n/a';
}

/**
 * Milliseconds with two decimals.
 * @example
 * ms(1.234) // '1.23 ms'
 */
export function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}
