import { describe, expect, it } from "vitest";
import { optionSecrets, redactor, urlSecrets } from "../../src/cli/redact";

describe("redactor", () => {
  it("masks the URL, its password (raw and decoded) and its credentials wherever they appear", () => {
    const url = "postgresql://app:p%40ss-w0rd@db.internal:5432/prod";
    const redact = redactor(urlSecrets(url));
    const text = `connect failed for ${url}; password p@ss-w0rd rejected; raw p%40ss-w0rd; creds app:p%40ss-w0rd`;
    const out = redact(text);
    for (const secret of [url, "p@ss-w0rd", "p%40ss-w0rd", "app:p%40ss-w0rd"]) expect(out).not.toContain(secret);
  });

  it("masks any PostgreSQL URL and the credentials of any URL, even unknown ones", () => {
    const redact = redactor([]);
    expect(redact("see postgres://a:b@h/x and mongodb://user:pw@m:27017/db")).toBe(
      "see <postgres URL> and mongodb://<redacted>@m:27017/db",
    );
  });

  it("leaves fixed text that names the schemes alone: only a URL is masked, not a bare postgres://", () => {
    const redact = redactor([]);
    const usage = "--postgres: expected a postgres:// or postgresql:// URL (or env:NAME)";
    expect(redact(usage)).toBe(usage);
    expect(redact("bad postgres://h/db and postgresql://u@h")).toBe("bad <postgres URL> and <postgres URL>");
  });

  it("a user name without a password is no secret: the word stays readable elsewhere, the URL is still masked", () => {
    const url = "postgresql://postgres@127.0.0.1:5432/test";
    expect(urlSecrets(url)).toEqual([url]);
    expect(redactor(urlSecrets(url))(`Next: repair --postgres <URL> (user postgres) after ${url}`)).toBe(
      "Next: repair --postgres <URL> (user postgres) after <redacted>",
    );
  });

  it("saver options: values under secret-sounding keys and values holding a URL", () => {
    expect(
      optionSecrets({
        schema: "app",
        connectionString: "mongodb://u:pw@h/db",
        nested: { password: "hunter22" },
        list: ["redis://:tok@h"],
      }).sort(),
    ).toEqual([":tok", "hunter22", "mongodb://u:pw@h/db", "pw", "redis://:tok@h", "tok", "u:pw"].sort());
  });
});
