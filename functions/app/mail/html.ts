const htmlEntities: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => htmlEntities[char]);
}

/** The HTML body every Cadence e-mail shares, around `paragraphs` (HTML, already escaped). */
export function htmlDocument(paragraphs: string[]): string {
  return ["<!doctype html>", '<html><body style="font-family: sans-serif; line-height: 1.5">', ...paragraphs, "</body></html>"]
    .join("\n");
}

/** A paragraph showing a code to type (a license key, a one-time code): large and spaced. */
export function codeParagraph(code: string): string {
  return `<p style="font-family: monospace; font-size: 1.4em; letter-spacing: 0.1em"><strong>${escapeHtml(code)}</strong></p>`;
}
