/** The `Age` header of an answer: present only on a last known good one. */
export function ageHeader(age: number | null): Record<string, string> {
  return age === null ? {} : { age: String(age) };
}
