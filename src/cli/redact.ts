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

export type Redact = (text: string) => string;

/** Secrets hidden in a PostgreSQL URL: the URL itself, its password (raw and decoded) and its user:password part. */
export function urlSecrets(url: string): string[] {
  const secrets = [url];
  const credentials = /^[a-z][a-z0-9+.-]*:\/\/([^/@]*)@/i.exec(url)?.[1];
  if (credentials) {
    // A user name alone is no secret, and masking it everywhere mangles text: `postgres://postgres@host/db`
    // would turn every "--postgres" the command prints into "--<redacted>".
    const password = credentials.includes(":") ? credentials.slice(credentials.indexOf(":") + 1) : "";
    if (password) {
      secrets.push(credentials, password);
      try {
        const decoded = decodeURIComponent(password);
        if (decoded !== password) secrets.push(decoded);
      } catch {
        // not percent-encoded: the raw form is already listed
      }
    }
  }
  return secrets;
}

/** String values of saver options that look secret: under a secret-sounding key, or holding a URL. */
export function optionSecrets(options: unknown, key = ""): string[] {
  if (typeof options === "string")
    return SECRET_KEY.test(key) || options.includes("://") ? [options, ...urlSecrets(options).slice(1)] : [];
  if (Array.isArray(options)) return options.flatMap((value) => optionSecrets(value, key));
  if (typeof options === "object" && options !== null)
    return Object.entries(options).flatMap(([k, value]) => optionSecrets(value, k));
  return [];
}

export function redactor(secrets: readonly string[]): Redact {
  // Longest first, so a URL is masked whole before its password would be masked inside it.
  const known = [...new Set(secrets.filter((s) => s.length >= 3))].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const secret of known) if (out.includes(secret)) out = out.split(secret).join("<redacted>");
    return out.replace(POSTGRES_URL, "<postgres URL>").replace(URL_CREDENTIALS, "$1<redacted>@");
  };
}
