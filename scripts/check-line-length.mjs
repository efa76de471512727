// No code line over 140 columns (the formatter wraps code at 120 but leaves long strings and comments alone).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const LIMIT = 140;
const files = execFileSync(
  "git",
  ["ls-files", "-co", "--exclude-standard", "*.ts", "*.mts", "*.cts", "*.mjs", "*.js"],
  {
    encoding: "utf8",
  },
)
  .split("\n")
  .filter(Boolean);
const long = [];
for (const file of files) {
  readFileSync(file, "utf8")
    .split("\n")
    .forEach((line, i) => {
      if (line.length > LIMIT) long.push(`${file}:${i + 1}: ${line.length} columns`);
    });
}
if (long.length > 0) {
  console.error(`${long.length} lines over ${LIMIT} columns:\n${long.join("\n")}`);
  process.exit(1);
}
console.log(`line length: ${files.length} files, no line over ${LIMIT} columns`);
