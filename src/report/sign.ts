import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { readInputText } from '../io/read-input.js';

// The lab key lives outside any run directory so it is never copied with the reports; CABLEQUAL_LAB_KEY overrides it.
export const DEFAULT_LAB_KEY_PATH = join(homedir(), '.config', 'cablequal', 'lab-key.pem');

export const PRIVATE_KEY_FILE = 'lab-key.pem';
export const PUBLIC_KEY_FILE = 'lab-key.pub.pem';

// Where to look for the lab private key: explicit path, then $CABLEQUAL_LAB_KEY, then the default.
export function labKeyPath(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return explicit ?? env['CABLEQUAL_LAB_KEY'] ?? DEFAULT_LAB_KEY_PATH;
}

export interface KeygenResult {
  privateKeyPath: string;
  publicKeyPath: string;
  fingerprint: string;
}

// Raw 32-byte Ed25519 public key, which is what the fingerprint hashes (not the DER/PEM wrapping).
export function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new UsageError('lab key is not an Ed25519 key');
  return Buffer.from(jwk.x, 'base64url');
}

// Fingerprint = "sha256:" + lowercase hex of SHA-256(raw 32-byte public key); printed by keygen, stored in certificates.
export function fingerprint(publicKey: KeyObject | string): string {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  return `sha256:${createHash('sha256').update(rawPublicKey(key)).digest('hex')}`;
}

// One key pair per lab: refuses to overwrite an existing key (certificates signed with it would become unverifiable).
export async function keygen(dir: string): Promise<KeygenResult> {
  const privateKeyPath = join(dir, PRIVATE_KEY_FILE);
  const publicKeyPath = join(dir, PUBLIC_KEY_FILE);
  for (const p of [privateKeyPath, publicKeyPath]) {
    const exists = await access(p).then(
      () => true,
      () => false,
    );
    if (exists) throw new UsageError(`${p} already exists: move it away first (certificates signed with it need its public key)`);
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  await writeFile(privateKeyPath, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600, flag: 'wx' });
  await writeFile(publicKeyPath, publicKey.export({ format: 'pem', type: 'spki' }), { mode: 0o644, flag: 'wx' });
  return { privateKeyPath, publicKeyPath, fingerprint: fingerprint(publicKey) };
}

// A loaded lab key: the private half signs, the public half and its fingerprint go into the certificate.
export interface LabKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicKeyPem: string;
  fingerprint: string;
}

// Null when the key file does not exist (the certificate is then written unsigned); UsageError when it is unreadable.
export async function loadLabKey(path: string): Promise<LabKey | null> {
  return readLabKey(path);
}

// loadLabKey, synchronously (the run reads the key before its journal's first line: the journal is signed as written).
export function readLabKey(path: string): LabKey | null {
  if (!existsSync(path)) return null;
  const pem = readInputText(path, 'key', path, 'lab key');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new UsageError(`${path}: not a PEM private key`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new UsageError(`${path}: lab key must be Ed25519, got ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(), fingerprint: fingerprint(publicKey) };
}

// What keygen writes and `openssl pkey -pubout` prints: one PEM block "PUBLIC KEY" (SPKI), nothing around it.
const PUBLIC_PEM = /^-----BEGIN PUBLIC KEY-----\r?\n(?:[A-Za-z0-9+/=]{1,76}\r?\n){1,20}-----END PUBLIC KEY-----\r?\n?$/;

// Why a text is not an Ed25519 public key in PEM (empty, RSA, a private key, garbage), or null when it is one.
export function publicKeyProblem(pem: string): string | null {
  if (pem.trim() === '') return 'empty';
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) return 'a private key: give the public key (lab-key.pub.pem; openssl pkey -pubout)';
  if (!PUBLIC_PEM.test(pem)) return 'not one PEM "PUBLIC KEY" block';
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    return 'not a readable PEM public key';
  }
  return key.asymmetricKeyType === 'ed25519' ? null : `key type ${key.asymmetricKeyType ?? 'unknown'}, not Ed25519`;
}

// A trusted lab public key read from a file, checked: anything but an Ed25519 public key is bad usage naming the file
// (`source` says where it was named: "--public-key lab.pub.pem"), never a silent fall-back to another key.
export function readTrustedPublicKey(path: string, source: string): { pem: string; source: string } {
  const pem = readInputText(path, 'key', source, "the lab's public key");
  const problem = publicKeyProblem(pem);
  if (problem) throw new UsageError(`${source}: not an Ed25519 public key (${problem})`);
  return { pem, source };
}

// Base64 (RFC 4648 §4, padded) of exactly 64 bytes in its one canonical spelling: 85 characters, then one whose low
// 4 bits are zero (A, Q, g or w: the last byte's 2 remaining bits), then "==".
export const SIGNATURE_PATTERN = '^[A-Za-z0-9+/]{85}[AQgw]==$';
const CANONICAL_SIGNATURE = new RegExp(SIGNATURE_PATTERN);

// Base64 Ed25519 signature of the exact bytes given (the caller passes canonical JSON).
export function signBytes(key: LabKey, data: string): string {
  return sign(null, Buffer.from(data, 'utf8'), key.privateKey).toString('base64');
}

// True only for a valid signature by this public key, given in the one spelling signBytes writes (base64 of 64 bytes,
// padded: Buffer.from would also read it without "==", in base64url or with junk after it); malformed input counts as
// invalid, never throws.
export function verifyBytes(publicKey: KeyObject | string, data: string, signatureB64: string): boolean {
  if (!CANONICAL_SIGNATURE.test(signatureB64)) return false;
  try {
    const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
    return verify(null, Buffer.from(data, 'utf8'), key, Buffer.from(signatureB64, 'base64'));
  } catch {
    return false;
  }
}

// The lab key for signing, refusing rather than signing nothing when a key was asked for: an explicit path or
// $CABLEQUAL_LAB_KEY naming a file that is not there is a usage error (the default path missing is not: no key yet).
export async function requireConfiguredLabKey(explicit: string | undefined, env: NodeJS.ProcessEnv): Promise<{ key: LabKey | null; path: string }> {
  const path = labKeyPath(explicit, env);
  const key = await loadLabKey(path);
  if (!key && (explicit !== undefined || env['CABLEQUAL_LAB_KEY'] !== undefined)) {
    throw new UsageError(
      `${path}: no lab key there (${explicit !== undefined ? 'given' : 'named by $CABLEQUAL_LAB_KEY'}); create it with cablequal keygen, or point CABLEQUAL_LAB_KEY at the lab key`,
    );
  }
  return { key, path };
}

// The lab's public key a certificate is verified against when none is given: $CABLEQUAL_LAB_PUBLIC_KEY (a PEM file;
// unreadable is a usage error), else the public key file keygen wrote beside the lab key, else the public half of
// the lab key itself. Null: no trusted key on this machine (the signature can then only be checked unpinned).
export async function trustedLabPublicKey(env: NodeJS.ProcessEnv): Promise<{ pem: string; source: string } | null> {
  const configured = env['CABLEQUAL_LAB_PUBLIC_KEY'];
  if (configured) return readTrustedPublicKey(configured, `$CABLEQUAL_LAB_PUBLIC_KEY ${configured}`);
  const keyPath = labKeyPath(undefined, env);
  const beside = join(dirname(keyPath), PUBLIC_KEY_FILE);
  if (existsSync(beside)) return readTrustedPublicKey(beside, `the lab's public key ${beside}`);
  try {
    const key = await loadLabKey(keyPath);
    return key ? { pem: key.publicKeyPem, source: `the public half of the lab key ${keyPath}` } : null;
  } catch {
    return null; // an unreadable lab key pins nothing: the result says unpinned
  }
}
