import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/report/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: 'é' }], c: true }, u: undefined })).toBe('{"a":{"c":true,"d":[3,{"y":"é","z":null}]},"b":1}');
  });

  it('rejects non-finite numbers instead of writing invalid JSON', () => {
    expect(() => canonicalJson({ x: Number.NaN })).toThrow(/non-finite/);
  });

  it('is independent of key insertion order and round-trips through JSON.parse', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null))), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        const text = canonicalJson(obj);
        expect(canonicalJson(reversed)).toBe(text);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
    );
  });
});
