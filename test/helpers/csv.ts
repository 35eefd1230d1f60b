// A minimal RFC 4180 reader for test assertions on the CSVs cablequal writes (quoted fields, doubled quotes,
// newlines inside quotes, CRLF records); independent of the writer, so a writer bug cannot hide itself.
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  if (cell || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

// The records of a CSV with a header row, as objects keyed by column name ('' for a missing trailing cell).
export function csvObjects(text: string): Record<string, string>[] {
  const [head, ...body] = parseCsv(text);
  return body.map((r) => Object.fromEntries(head!.map((n, i) => [n, r[i] ?? ''])));
}
