// The shape of a validUntil, checked before a request is sent.

/**
 * VALID_UNTIL_PATTERN is the pattern of validUntil in the API's OpenAPI
 * document (a test holds the two together): a date alone, "YYYY-MM-DD".
 */
export const VALID_UNTIL_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/**
 * isDate reports whether s is a date alone, "YYYY-MM-DD", of a day the
 * calendar has: no time, no one-digit month or day, no 2026-02-30. Whether
 * the day is in the range the service allows is the service's to say.
 */
export function isDate(s: string): boolean {
  if (!VALID_UNTIL_PATTERN.test(s)) return false;
  const d = new Date(s + "T00:00:00Z");
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}
