// Line shapes: compare outputs by layout, not by values. A template replaces values with placeholders and runs of
// blanks with one space; the separators of a line are its blank runs, kept as TABs and space runs ("S"), so a TAB
// where the real tool prints one is a difference while the width of a padded value is not.
import { sample } from './samples.js';

// Lines of a real sample as the tool printed them: without the `# source:` line, shell prompts and command lines,
// Markdown fences and blank lines (what a paste adds around a tool's output); `drop` removes more (e.g. prose).
export function realLines(rel: string, opts: { drop?: RegExp } = {}): string[] {
  return sample(rel)
    .split('\n')
    .filter((l) => l.trim() !== '' && !/^\S+@\S+:.*\$/.test(l) && !/^\s*\$ /.test(l) && !/^```/.test(l) && !(opts.drop?.test(l) ?? false));
}

// Lines of a generated output (no blank-line filtering: a blank line the tool prints is part of the layout).
export function outputLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export interface TemplateOptions {
  // Exact strings (interface, device, host names) replaced by a named placeholder before anything else.
  names?: Record<string, string>;
  // Keep hex words (0x..) and numbers as they are (for lines whose values are the structure, e.g. hex rows).
  keepNumbers?: boolean;
}

// The template of one line: names, IPv4 addresses, hex words and numbers become <name>, <ip>, <hex>, <n>; blank runs
// become one space; trailing blanks go.
export function template(line: string, opts: TemplateOptions = {}): string {
  let s = line;
  for (const [name, ph] of Object.entries(opts.names ?? {}).sort((a, b) => b[0].length - a[0].length)) s = s.split(name).join(`<${ph}>`);
  s = s.replace(/\b\d{1,3}(?:\.\d{1,3}){3}\b/g, '<ip>');
  if (!opts.keepNumbers) s = s.replace(/\b0x[0-9a-fA-F]+\b/g, '<hex>').replace(/-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b/g, '<n>');
  return s.replace(/[ \t]+/g, ' ').replace(/ $/, '');
}

// The blank runs between a line's words (leading indentation included, trailing blanks not), each as its TABs with
// every run of spaces written "S": " 65536      882805 ... 92.57  \t\t   0.176554" => [S, S, S, S, S\t\tS].
export function separators(line: string): string[] {
  const body = line.replace(/[ \t]+$/, '');
  return (body.match(/[ \t]+/g) ?? []).map((run) => run.replace(/ +/g, 'S'));
}

// The blank runs of a line as written, each kept exactly ("\t\t", three spaces written "SSS") unless it follows a
// value (a word template() turns into a placeholder), whose padding depends on the value's width: then only its
// TABs count (as in separators()). Compares fixed text byte for byte and values by kind.
export function layout(line: string, opts: TemplateOptions = {}): string[] {
  const parts = line.replace(/[ \t]+$/, '').split(/([ \t]+)/);
  const out: string[] = [];
  for (let i = 1; i < parts.length; i += 2) {
    const before = parts[i - 1]!;
    const run = parts[i]!;
    const afterValue = before !== '' && template(before, opts).includes('<');
    out.push(afterValue ? run.replace(/ +/g, 'S') : run.replace(/ /g, 'S'));
  }
  return out;
}

// Whether `sub` occurs in `seq` in order (not necessarily contiguously); returns the first item not found.
export function missingInOrder(seq: readonly string[], sub: readonly string[]): string | null {
  let i = 0;
  for (const s of sub) {
    while (i < seq.length && seq[i] !== s) i++;
    if (i === seq.length) return s;
    i++;
  }
  return null;
}
