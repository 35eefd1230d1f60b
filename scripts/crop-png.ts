// The top of a PNG as a PNG of its own (README's picture of a certificate is the top of the one
// scripts/screenshot-certificate.ts takes): `npx tsx scripts/crop-png.ts <in.png> <rows> <out.png>`. A non-interlaced
// PNG's first rows are a PNG by themselves: each scanline's filter reads only the rows above it, so the first <rows>
// scanlines are kept as they are, under an IHDR saying the new height (PNG specification, §4.1 IHDR, §9 filtering).
import { readFileSync, writeFileSync } from 'node:fs';
import { crc32, deflateSync, inflateSync } from 'node:zlib';

const [input, rowsText, output] = process.argv.slice(2);
if (!input || !rowsText || !output) throw new Error('usage: npx tsx scripts/crop-png.ts <in.png> <rows> <out.png>');
const png = readFileSync(input);
const chunks: { type: string; data: Buffer }[] = [];
for (let at = 8; at < png.length;) {
  const length = png.readUInt32BE(at);
  chunks.push({ type: png.toString('latin1', at + 4, at + 8), data: png.subarray(at + 8, at + 8 + length) });
  at += 12 + length;
}
const ihdr = Buffer.from(chunks[0]!.data);
const [width, height, depth, colour, interlace] = [ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8]!, ihdr[9]!, ihdr[12]!];
const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[colour as 0 | 2 | 4 | 6];
if (depth !== 8 || channels === undefined || interlace !== 0) throw new Error(`${input}: only 8-bit non-interlaced grey or RGB(A) PNGs`);
const rows = Math.min(Number(rowsText), height);
const pixels = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
ihdr.writeUInt32BE(rows, 4);
const chunk = (type: string, data: Buffer) => {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
};
const idat = deflateSync(pixels.subarray(0, rows * (1 + width * channels)), { level: 9 });
writeFileSync(output, Buffer.concat([png.subarray(0, 8), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]));
process.stdout.write(`${output}: ${width} x ${rows} (of ${height})\n`);
