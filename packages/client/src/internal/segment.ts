// A value put in a URL's path, one segment: percent-encoded, and refused when it is `.` or `..` (which
// a URL resolves away, sending the call to another route) or empty (which names no resource).

/** `value` as one path segment; a TypeError naming `what` for `.`, `..` or "". */
export const segment = (value: string, what: string): string => {
  if (value === "" || value === "." || value === "..") {
    throw new TypeError(`MailroomClient: ${what}: ${JSON.stringify(value)} is not an id this API issues`)
  }
  return encodeURIComponent(value)
}
