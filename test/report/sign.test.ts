import { createPublicKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { fingerprint, keygen, labKeyPath, loadLabKey, rawPublicKey, signBytes, verifyBytes, DEFAULT_LAB_KEY_PATH } from '../../src/report/sign.js';
import { tempRoot } from '../fixtures/records/run-dir.js';

describe('lab key', () => {
  it('keygen writes a 0600 private key and a public key whose fingerprint it returns', async () => {
    const dir = join(tempRoot(), 'keys');
    const k = await keygen(dir);
    expect(statSync(k.privateKeyPath).mode & 0o777).toBe(0o600);
    expect(k.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const pub = readFileSync(k.publicKeyPath, 'utf8');
    expect(fingerprint(pub)).toBe(k.fingerprint);
    expect(rawPublicKey(createPublicKey(pub))).toHaveLength(32);
    const loaded = await loadLabKey(k.privateKeyPath);
    expect(loaded?.fingerprint).toBe(k.fingerprint);
  });

  it('keygen refuses to overwrite an existing key', async () => {
    const dir = tempRoot();
    await keygen(dir);
    await expect(keygen(dir)).rejects.toBeInstanceOf(UsageError);
  });

  it('a missing key file loads as null (certificate written unsigned), a non-key file is a UsageError', async () => {
    const dir = tempRoot();
    expect(await loadLabKey(join(dir, 'nope.pem'))).toBeNull();
    const k = await keygen(dir);
    await expect(loadLabKey(k.publicKeyPath)).rejects.toBeInstanceOf(UsageError);
  });

  it('signatures verify only for the same bytes and the same key', async () => {
    const a = (await loadLabKey((await keygen(tempRoot())).privateKeyPath))!;
    const b = (await loadLabKey((await keygen(tempRoot())).privateKeyPath))!;
    const sig = signBytes(a, '{"x":1}');
    expect(verifyBytes(a.publicKey, '{"x":1}', sig)).toBe(true);
    expect(verifyBytes(a.publicKey, '{"x":2}', sig)).toBe(false);
    expect(verifyBytes(b.publicKey, '{"x":1}', sig)).toBe(false);
    expect(verifyBytes(a.publicKey, '{"x":1}', 'not base64!')).toBe(false);
    expect(a.fingerprint).not.toBe(b.fingerprint);
  });

  it('key path: explicit, then CABLEQUAL_LAB_KEY, then ~/.config/cablequal/lab-key.pem', () => {
    expect(labKeyPath('/x.pem', { CABLEQUAL_LAB_KEY: '/y.pem' })).toBe('/x.pem');
    expect(labKeyPath(undefined, { CABLEQUAL_LAB_KEY: '/y.pem' })).toBe('/y.pem');
    expect(labKeyPath(undefined, {})).toBe(DEFAULT_LAB_KEY_PATH);
    expect(DEFAULT_LAB_KEY_PATH.endsWith('/.config/cablequal/lab-key.pem')).toBe(true);
  });
});
