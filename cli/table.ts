// The CLI's plain-text tables (`check`, `dead-letters list`): columns padded to their widest cell, two spaces apart.

/**
 * Lays out `rows` (the header first, which sets the columns) as text: every column but the last padded to its
 * widest cell, columns two spaces apart, no trailing spaces, a newline after each row.
 * @example
 * io.stdout(formatTable([['result', 'check'], ['PASS', 'a forged signature is refused']]));
 */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  // The last column is not padded: nothing follows its cells (a reason, a time), so padding would only be trimmed.
  const lines = rows.map((row) =>
    row
      .map((cell, i) => (i < widths.length - 1 ? cell.padEnd(widths[i]!) : cell))
      .join('  ')
      .trimEnd(),
  );
  return `${lines.join('\n')}\n`;
}
