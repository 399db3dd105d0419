/** One entity-tag (RFC 9110 section 8.8.3): optional weak prefix, then a quoted opaque tag. */
const entityTag = /(?:W\/)?"([\x21\x23-\x7E\x80-\xFF]*)"/y;

function isListSpace(char: string): boolean {
  return char === " " || char === "\t";
}

/**
 * The opaque tags of an If-None-Match list (RFC 9110 section 5.6.1 lists: optional whitespace,
 * empty elements allowed), or null when the value is not a list of entity-tags.
 */
function opaqueTags(value: string): string[] | null {
  const tags: string[] = [];
  let at = 0;
  for (;;) {
    while (at < value.length && (value[at] === "," || isListSpace(value[at]))) at++;
    if (at === value.length) return tags;
    entityTag.lastIndex = at;
    const match = entityTag.exec(value);
    if (!match) return null;
    tags.push(match[1]);
    at = entityTag.lastIndex;
    while (at < value.length && isListSpace(value[at])) at++;
    if (at < value.length && value[at] !== ",") return null;
  }
}

/**
 * Whether an If-None-Match field value matches the current entity-tag `"<version>"`, as RFC 9110
 * section 13.1.2 reads it: `*` matches any current representation; otherwise any tag of the list
 * matches by weak comparison, so `W/"<version>"` matches too (Supabase's edge proxy turns strong
 * ETags weak on the way out). A malformed value matches nothing: the client gets the full 200.
 *
 * @example
 * ifNoneMatch('W/"abc", "def"', "abc"); // true
 */
export function ifNoneMatch(field: string | undefined, version: string): boolean {
  if (field === undefined) return false;
  const value = field.trim();
  if (value === "*") return true;
  return opaqueTags(value)?.includes(version) ?? false;
}
