// Encoding as Go's encoding/json and time packages write it, so that a
// message built here is byte for byte the one the Go producer builds.

const hex = "0123456789abcdef";

/**
 * goString returns s as a JSON string exactly as Go's json.Marshal writes
 * it: `"` and `\` escaped, \b \f \n \r \t by name, other control
 * characters as \u00XX, `<`, `>` and `&` as \u003c \u003e \u0026 (Go's
 * HTML-safe default), U+2028 and U+2029 escaped, and a lone surrogate
 * (invalid UTF-8 in Go) as \ufffd.
 */
export function goString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
      } else {
        out += "\\ufffd";
      }
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) {
      out += "\\ufffd";
      continue;
    }
    out += escapeUnit(c, s[i]!);
  }
  return out + '"';
}

/** escapeUnit returns the JSON of one UTF-16 unit that is not a surrogate. */
function escapeUnit(c: number, ch: string): string {
  switch (ch) {
    case '"':
      return '\\"';
    case "\\":
      return "\\\\";
    case "\b":
      return "\\b";
    case "\f":
      return "\\f";
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
  }
  if (c < 0x20 || ch === "<" || ch === ">" || ch === "&") {
    return "\\u00" + hex[c >> 4] + hex[c & 0xf];
  }
  if (c === 0x2028 || c === 0x2029) {
    return "\\u" + c.toString(16);
  }
  return ch;
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * goTime returns t in UTC as Go's time.Time MarshalJSON writes it
 * (RFC 3339 with nanoseconds, trailing zeros of the fraction left out),
 * without the quotes. t is a Date or an RFC 3339 string; a string keeps
 * its nanoseconds. It returns undefined for a string that is not RFC 3339
 * or a date outside the years 0 to 9999.
 */
export function goTime(t: Date | string): string | undefined {
  let ms: number;
  let fraction: string;
  if (typeof t === "string") {
    const m = rfc3339.exec(t);
    if (!m) {
      return undefined;
    }
    const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
    if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59) {
      return undefined;
    }
    let offset = 0;
    if (m[9] !== undefined) {
      const oh = Number(m[10]);
      const om = Number(m[11]);
      if (oh > 23 || om > 59) {
        return undefined;
      }
      offset = (m[9] === "-" ? -1 : 1) * (oh * 60 + om) * 60_000;
    }
    const utc = new Date(0);
    utc.setUTCFullYear(y, mo - 1, d);
    utc.setUTCHours(h, mi, s, 0);
    ms = utc.getTime() - offset;
    fraction = m[7] ?? "";
  } else {
    ms = t.getTime();
    if (Number.isNaN(ms)) {
      return undefined;
    }
    const milli = ((ms % 1000) + 1000) % 1000;
    ms -= milli;
    fraction = String(milli).padStart(3, "0");
  }
  const whole = new Date(ms);
  const year = whole.getUTCFullYear();
  if (year < 0 || year > 9999) {
    return undefined;
  }
  fraction = fraction.replace(/0+$/, "");
  const iso = whole.toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z for years 0 to 9999
  return iso.slice(0, 19) + (fraction ? "." + fraction : "") + "Z";
}

/** daysIn returns the number of days of month mo (1 to 12) of year y. */
function daysIn(y: number, mo: number): number {
  return new Date(Date.UTC(2000, mo, 0)).getUTCDate() - (mo === 2 && !leap(y) ? 1 : 0);
}

function leap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}
