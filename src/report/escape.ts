// EEPROM vendor strings are arbitrary bytes: everything printed into HTML/XML goes through here.
export function escapeXml(text: string | number | null | undefined): string {
  if (text === null || text === undefined) return '';
  return (
    String(text)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&#39;')
      // XML 1.0 forbids most C0 controls even as references; show them instead of dropping them silently.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
  );
}
