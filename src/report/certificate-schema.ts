// The JSON Schema of certificate.json (and run-report.json) as `verify` reads it back: exactly the documented top-level
// keys (`body`, `signature`, `unsignedReason`), a signature that is the canonical base64 of a 64-byte Ed25519
// signature, and in the body every field verify reads (schema, kind, outcome, reasons, rulesVersion, journal,
// signer) with its type. The rest of the body is covered by the signature and read by nobody: other fields are allowed
// there, so that certificates written by earlier versions keep verifying.
import { compileSchema, type JsonSchema } from '../io/json-schema.js';
import { SIGNATURE_PATTERN } from './sign.js';
import { arrayOf, obj, orNull, outcome, reason, str, whole } from './record-schema.js';

// A plain file name (the journal beside the certificate), never a path.
const fileName: JsonSchema = { type: 'string', pattern: '^(?!\\.\\.?$)[^/\\u0000-\\u001f]{1,255}$', title: 'a file name (no directory)' };

const signer = obj({
  algorithm: { const: 'Ed25519' },
  fingerprint: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$', title: 'sha256: and 64 hex digits' },
  publicKeyPem: { type: 'string', maxLength: 4096, title: 'a PEM public key (at most 4096 characters)' },
});

const body = obj({
  schema: { const: 'cablequal.certificate/1' },
  kind: { enum: ['certificate', 'run-report'] },
  runId: str,
  outcome,
  reasons: arrayOf(reason),
  'rulesVersion?': whole,
  journal: obj({
    file: fileName,
    sha256: orNull({ type: 'string', pattern: '^[0-9a-f]{64}$', title: '64 hex digits' }),
    bytes: orNull(whole),
  }),
  signer: orNull(signer),
});

// certificate.json: { body, signature, unsignedReason? } and nothing else.
export const CERTIFICATE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    body,
    signature: orNull({
      type: 'string',
      pattern: SIGNATURE_PATTERN,
      title: 'the canonical base64 of a 64-byte Ed25519 signature (88 characters ending in ==)',
    }),
    unsignedReason: { type: 'string', maxLength: 1000 },
  },
  required: ['body', 'signature'],
  additionalProperties: false,
};

// The first problem of a parsed certificate document (path first), or null.
export const certificateProblem = compileSchema(CERTIFICATE_SCHEMA);
