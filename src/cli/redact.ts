/**
 * Connection strings and credentials never reach the terminal: every byte the command writes goes through a
 * redactor that knows the secrets of this run (the PostgreSQL URL and its password, secret-looking saver
 * options) and masks any URL with credentials or any PostgreSQL URL it meets, including inside errors that
 * drivers throw.
 */

// A URL, not the bare scheme: "postgres://" alone (as usage text names it) holds nothing to hide.
const POSTGRES_URL = /\bpostgres(?:ql)?:\/\/[^\s'"`<>]+/gi;
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"`<>]*@/gi;
const SECRET_KEY = /pass|secret|token|key|cred|auth|uri|url|conn|dsn/i;

/**
 * Secrets hidden in a PostgreSQL URL: the URL itself, its password (raw and decoded) and its user:password part.
 * A user name alone is no secret, and masking it everywhere mangles text: `postgres://postgres@host/db` would
 * turn every "--postgres" the command prints into "--<redacted>".
 */
export function urlSecrets(url: string) {
  const [, credentials, password] = /^[a-z][a-z0-9+.-]*:\/\/([^/@:]*:([^/@]*))@/i.exec(url) ?? [];
  if (!password) return [url];
  let decoded = password;
  try {
    decoded = decodeURIComponent(password);
  } catch {
    // not percent-encoded: the raw form is listed
  }
  return [url, credentials, password, ...(decoded !== password ? [decoded] : [])];
}

/** String values of saver options that look secret: under a secret-sounding key, or holding a URL. */
export const optionSecrets = (options: unknown, key = ""): string[] =>
  typeof options === "string"
    ? SECRET_KEY.test(key) || options.includes("://")
      ? urlSecrets(options)
      : []
    : Array.isArray(options)
      ? options.flatMap((value) => optionSecrets(value, key))
      : options && typeof options === "object"
        ? Object.entries(options).flatMap(([k, value]) => optionSecrets(value, k))
        : [];

export function redactor(secrets: readonly string[]) {
  // Longest first, so a URL is masked whole before its password would be masked inside it.
  const known = [...new Set(secrets.filter((s) => s.length >= 3))].sort((a, b) => b.length - a.length);
  return (text: string) =>
    known
      .reduce((out, secret) => out.replaceAll(secret, "<redacted>"), text)
      .replace(POSTGRES_URL, "<postgres URL>")
      .replace(URL_CREDENTIALS, "$1<redacted>@");
}
