// Text from outside (a node's output, a cable EEPROM, a file, the command line) on its way to a terminal or a
// one-line message: control bytes are shown as visible escapes, never sent raw (ESC, BEL, NUL and the C1 controls
// can move the cursor, retitle the window or hide text), and a long text is clipped with its length said.

// C0 controls, DEL, C1 controls, and the bidirectional overrides that reorder what is shown (Trojan Source).
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

// One printable line: every control character as \n, \t, \xNN or \u{NNNN}; nothing else changes.
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

// At most `max` characters: a longer text keeps its start and says how long it was.
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length} chars)`;
}

// A value the user or a node gave, echoed inside a message: quoted, escaped and clipped (a 5,000-character host
// name is not printed back whole).
export function quoteInput(value: unknown, max = 80): string {
  const s = typeof value === 'string' ? value : String(value);
  return `"${clip(printable(s), max)}"`;
}

// A command line inside a message or a reason: the sampler's tick script is 2,000 characters, the reason needs its start.
export function commandText(command: string, max = 120): string {
  return clip(printable(command.replace(/\s+/g, ' ').trim()), max);
}
