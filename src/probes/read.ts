// A value quoted in a ParseError reason: trimmed, cut at 60 characters, JSON-escaped so it stays on one line.
export function clip(s: string): string {
  const t = s.trim();
  return JSON.stringify(t.length > 60 ? `${t.slice(0, 57)}...` : t);
}
