// The control characters shown as \xHH wherever cablequal writes untrusted text to a file a person reads (HTML, XML,
// CSV): C0 but tab, LF and CR, and DEL; a CSV `cat` to a terminal runs none of them (ESC [2J cleared it, #32 item 6).
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const shown = (c: string) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

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
      .replace(CONTROLS, shown)
  );
}

// `text` with those control characters shown as \xHH (what escapeXml does to them, without the markup escapes).
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, shown);
}
