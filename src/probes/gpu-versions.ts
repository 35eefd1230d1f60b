// The GPU driver and the CUDA version it supports, from the header line of nvidia-smi's default table:
// `| NVIDIA-SMI 580.95.05   Driver Version: 580.95.05   CUDA Version: 13.0 |` (docs/formats.md §8a).
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

const KIND = 'nvidia-smi-versions';
const VERSION = '([0-9][0-9A-Za-z._-]{0,31})';
const HEADER = new RegExp(`NVIDIA-SMI\\s+\\S+\\s+Driver Version:\\s+${VERSION}(?:\\s+CUDA Version:\\s+(\\S+))?`);

export interface GpuVersions {
  driver: string; // e.g. 580.95.05
  cuda: string | null; // the highest CUDA version this driver supports (not the toolkit installed), e.g. 13.0; null: N/A
}

// Read the versions from nvidia-smi's table; a ParseError when no header line names the driver.
export function parseGpuVersions(text: string): GpuVersions {
  const m = HEADER.exec(text);
  if (!m) throw new ParseError(KIND, 1, `no "NVIDIA-SMI ... Driver Version: ..." header line: ${clip(text.split('\n').find((l) => l.trim()) ?? '')}`);
  const cuda = m[2] !== undefined && /^[0-9][0-9.]{0,15}$/.test(m[2]) ? m[2] : null;
  return { driver: m[1]!, cuda };
}
