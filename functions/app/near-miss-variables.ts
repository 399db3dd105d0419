/** Whether `a` becomes `b` by one edit: a character added, removed, replaced, or two side by side swapped. */
function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let start = 0;
  while (start < a.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const differA = a.slice(start, endA);
  const differB = b.slice(start, endB);
  if (differA.length + differB.length <= 2 && Math.max(differA.length, differB.length) <= 1) return true;
  return differA.length === 2 && differB.length === 2 && differA[0] === differB[1] && differA[1] === differB[0];
}

/** A variable in the environment that is not one of `known` but one edit from one: a likely typo. */
export interface NearMiss {
  variable: string;
  meant: string;
}

/**
 * The environment's variables one edit away from a variable Cadence reads and not one themselves
 * (`SIGNING_SECRT` for `SIGNING_SECRET`), which the server would otherwise ignore without a word.
 * Names shorter than five letters are left out: `HOME` and `HOST`, `PATH` and `PORT` are not typos.
 *
 * @example
 * nearMisses(["SIGNING_SECRT", "HOME"], ["SIGNING_SECRET", "HOST"]); // [{ variable: "SIGNING_SECRT", meant: "SIGNING_SECRET" }]
 */
export function nearMisses(present: readonly string[], known: readonly string[]): NearMiss[] {
  const knownSet = new Set(known);
  return present.flatMap((variable) => {
    if (knownSet.has(variable) || variable.length < 5) return [];
    const meant = known.find((name) => name.length >= 5 && oneEditApart(variable, name));
    return meant ? [{ variable, meant }] : [];
  });
}
