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
    expect(redact("see postgres://a:b@h/x and mongodb://user:pw@m:27017/db")).toBe("see <postgres URL> and mongodb://<redacted>@m:27017/db");
  });

  it("saver options: values under secret-sounding keys and values holding a URL", () => {
    expect(optionSecrets({ schema: "app", connectionString: "mongodb://u:pw@h/db", nested: { password: "hunter22" }, list: ["redis://:tok@h"] }).sort()).toEqual(
      [":tok", "hunter22", "mongodb://u:pw@h/db", "pw", "redis://:tok@h", "tok", "u:pw"].sort(),
    );
  });
});
