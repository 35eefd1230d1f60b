// Untrusted text on its way to a terminal or a one-line message: visible escapes, capped length.
import { describe, expect, it } from 'vitest';
import { clip, commandText, printable, quoteInput } from '../../src/domain/text.js';
import { RemoteCommandError } from '../../src/transport/types.js';

describe('printable', () => {
  it('shows ESC, BEL, NUL, C1 controls, DEL and bidi overrides as escapes; keeps the rest', () => {
    expect(printable('\u001b]0;pwned\u0007ok\u0000')).toBe('\\x1b]0;pwned\\x07ok\\x00');
    expect(printable('a\nb\tc\rd')).toBe('a\\nb\\tc\\rd');
    expect(printable('\u009b31m\u007f')).toBe('\\x9b31m\\x7f');
    expect(printable('abc\u202edcba')).toBe('abc\\u{202e}dcba');
    expect(printable('Amphenol NJAAKK0006 é 25 °C')).toBe('Amphenol NJAAKK0006 é 25 °C');
  });
});

describe('clip, quoteInput, commandText', () => {
  it('a 5,000-character host name is echoed as its start and its length', () => {
    expect(quoteInput('h'.repeat(5000))).toBe(`"${'h'.repeat(80)}… (5000 chars)"`);
    expect(clip('short', 10)).toBe('short');
  });

  it('a 2,000-character script in a command error is cut to its start: the reason stays readable', () => {
    const script = `: tick; ${'ethtool -S enp1s0f1np1 >&7; '.repeat(80)}`;
    expect(script.length).toBeGreaterThan(2000);
    const oneLine = script.trim(); // runs of white space become one space
    expect(commandText(script)).toBe(`${oneLine.slice(0, 120)}… (${oneLine.length} chars)`);
    const e = new RemoteCommandError('spark-a', { command: script, stdout: '', stderr: 'x\n'.repeat(1000), exitCode: 1, signal: null, durationMs: 5 });
    expect(e.message.length).toBeLessThan(500);
    expect(e.message.startsWith('spark-a: `: tick; ethtool -S enp1s0f1np1')).toBe(true);
  });
});
