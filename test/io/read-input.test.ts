// #22 item 9: every file the CLI reads as input is a regular file below its kind's size limit, or one line naming it:
// /dev/zero, a FIFO nobody writes to, a directory or an oversized file never hangs or fills memory.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { INPUT_LIMITS, readInputText } from '../../src/io/read-input.js';
import { loadSshConfig } from '../../src/transport/ssh-config-files.js';

const dir = mkdtempSync(join(tmpdir(), 'cq-input-'));

function refusal(path: string, kind: keyof typeof INPUT_LIMITS = 'protocol'): string {
  try {
    readInputText(path, kind);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).not.toContain('\n');
    return (e as Error).message;
  }
  throw new Error(`${path} was read`);
}

describe('readInputText', () => {
  it('reads a regular file whole', () => {
    writeFileSync(join(dir, 'p.json'), '{"name":"x"}\n');
    expect(readInputText(join(dir, 'p.json'), 'protocol')).toBe('{"name":"x"}\n');
  });

  it('refuses a device, a directory and a missing file, naming them', () => {
    expect(refusal('/dev/zero')).toBe('/dev/zero: a device, not a regular file');
    mkdirSync(join(dir, 'd.json'));
    expect(refusal(join(dir, 'd.json'))).toBe(`${join(dir, 'd.json')}: a directory, not a regular file`);
    expect(refusal(join(dir, 'missing.json'))).toBe(`${join(dir, 'missing.json')}: cannot read protocol file (ENOENT)`);
  });

  it('refuses a FIFO at once, without waiting for a writer', () => {
    const fifo = join(dir, 'fifo.json');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    expect(refusal(fifo)).toBe(`${fifo}: a pipe, not a regular file`);
  });

  it('refuses a file above its kind`s limit, saying the limit', () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, '');
    truncateSync(big, INPUT_LIMITS.protocol.bytes + 1);
    expect(refusal(big)).toBe(`${big}: ${INPUT_LIMITS.protocol.bytes + 1} bytes, more than the 1 MiB a protocol file may hold`);
    truncateSync(big, INPUT_LIMITS.key.bytes + 1);
    expect(refusal(big, 'key')).toBe(`${big}: ${INPUT_LIMITS.key.bytes + 1} bytes, more than the 64 KiB a key file may hold`);
    truncateSync(big, INPUT_LIMITS.protocol.bytes);
    expect(readInputText(big, 'protocol')).toHaveLength(INPUT_LIMITS.protocol.bytes);
  });
});

describe('ssh configs are read the same way', () => {
  it('--ssh-config /dev/zero, or an Include of it, is refused at once', () => {
    expect(() => loadSshConfig('/dev/zero', dir)).toThrow(new UsageError('/dev/zero: a device, not a regular file'));
    const config = join(dir, 'ssh_config');
    writeFileSync(config, 'Include /dev/zero\n');
    expect(() => loadSshConfig(config, dir)).toThrow(/Include \/dev\/zero: cannot read \/dev\/zero: \/dev\/zero: a device, not a regular file/);
  });
});
