// The size of `src` as code: comments, white space lines and blank lines aside, measured with the TypeScript
// scanner (template literals and regular expressions rescanned, so their text is never taken for a comment).
// `node scripts/code-size.mjs [dir] [rows]` prints the largest files and the total; test/architecture.test.ts
// holds the total to its budget.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const K = ts.SyntaxKind;
/** After these tokens a `/` divides; after anything else it opens a regular expression. */
const ENDS_OPERAND = new Set([
  K.Identifier,
  K.NumericLiteral,
  K.StringLiteral,
  K.CloseParenToken,
  K.CloseBracketToken,
  K.CloseBraceToken,
  K.ThisKeyword,
  K.NoSubstitutionTemplateLiteral,
  K.TemplateTail,
]);

/** Bytes of code in one TypeScript source text. */
export function codeBytes(text) {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const braces = []; // per open brace: whether it closes a template's `${`
  let out = "";
  let previous;
  for (let kind = scanner.scan(); kind !== K.EndOfFileToken; kind = scanner.scan()) {
    if (kind === K.SingleLineCommentTrivia || kind === K.MultiLineCommentTrivia) continue;
    if (kind === K.TemplateHead) braces.push(true);
    else if (kind === K.OpenBraceToken) braces.push(false);
    else if (kind === K.CloseBraceToken && braces.pop()) {
      kind = scanner.reScanTemplateToken(false);
      if (kind === K.TemplateMiddle) braces.push(true);
    } else if ((kind === K.SlashToken || kind === K.SlashEqualsToken) && !ENDS_OPERAND.has(previous)) {
      kind = scanner.reScanSlashToken();
    }
    if (kind !== K.WhitespaceTrivia && kind !== K.NewLineTrivia) previous = kind;
    out += scanner.getTokenText();
  }
  return out
    .split("\n")
    .filter((line) => line.trim() !== "")
    .join("\n").length;
}

/** Every `.ts` file under `dir` with its bytes of code, largest first. */
export function codeSizes(dir) {
  const files = [];
  const walk = (at) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith(".ts"))
        files.push({ path: relative(dir, path), bytes: codeBytes(readFileSync(path, "utf8")) });
    }
  };
  walk(dir);
  return files.sort((a, b) => b.bytes - a.bytes);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = resolve(process.argv[2] ?? "src");
  const files = codeSizes(dir);
  for (const { path, bytes } of files.slice(0, Number(process.argv[3] ?? 20))) {
    console.log(`${(bytes / 1000).toFixed(1).padStart(7)} KB  ${path}`);
  }
  const total = files.reduce((sum, file) => sum + file.bytes, 0);
  console.log(`${(total / 1000).toFixed(1).padStart(7)} KB  in all (${files.length} files)`);
}
